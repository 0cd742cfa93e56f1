"""TorchRec sharding plans, as `strait plan --torchrec FILE` writes them, for TorchRec.

    import strait.torchrec

    plan = strait.torchrec.load_plan("sharding.json")
    model = DistributedModelParallel(module, plan=plan, ...)  # torchrec.distributed

load_plan(path) reads the file (planner/README.md, "TorchRec form": TorchRec's
ShardingPlan._serialize() shape) and returns torchrec.distributed.types.ShardingPlan, made of
TorchRec's EmbeddingModuleShardingPlan and ParameterSharding and PyTorch's
EnumerableShardingSpec and ShardMetadata, where torchrec imports. Elsewhere it returns the
same structure in this module's dataclasses of the same names, whose fields are TorchRec's and
PyTorch's, in their order and with their defaults (placement stays the string
"rank:R/cuda:L" that PyTorch parses into a _remote_device).

The file's "strait" block (group size, replicas, estimates) has no place in a ShardingPlan and
is left out, and so is bounds_check_mode (FBGEMM's BoundsCheckMode: strait reads and ignores
it). load_plan reads the file with strait's own reader (_strait.read_torchrec_file), which
makes every check of `strait simulate SCENARIO --torchrec FILE` that needs no model: keys,
sharding type, compute kernel, shards, placements, ranks (that command also checks the plan
against the model: every table once, shards that tile it). A bad file raises
strait.ConfigError (.file, .pointer, .expectation) with the text that command prints for the
same fault, a file that cannot be read strait.Error.
"""

import dataclasses as _dataclasses
import os as _os
import sys as _sys
from typing import Any, Dict, List, Optional

from . import _strait

__all__ = [
    "EmbeddingModuleShardingPlan",
    "EnumerableShardingSpec",
    "ParameterSharding",
    "SHARDING_TYPES",
    "ShardMetadata",
    "ShardingPlan",
    "load_plan",
]

#: The sharding types of strait's TorchRec form (TorchRec's ShardingType values it models).
SHARDING_TYPES = ("data_parallel", "table_wise", "row_wise", "column_wise", "table_row_wise", "grid_shard")


@_dataclasses.dataclass
class ShardMetadata:
    """One shard of a table: PyTorch's torch.distributed._shard.metadata.ShardMetadata.

    shard_offsets and shard_sizes are [row, column]; placement is "rank:R/cuda:L" (global rank
    R of the model-parallel group, local GPU L); bucket_id_offset and num_buckets are None
    (set, they mark bucket-wise shards of a virtual table, which strait refuses)."""

    shard_offsets: List[int]
    shard_sizes: List[int]
    placement: Optional[str] = None
    bucket_id_offset: Optional[int] = None
    num_buckets: Optional[int] = None


@_dataclasses.dataclass
class EnumerableShardingSpec:
    """A table's shards, one per slice: PyTorch's
    torch.distributed._shard.sharding_spec.EnumerableShardingSpec."""

    shards: List[ShardMetadata]


@_dataclasses.dataclass
class ParameterSharding:
    """How one table is sharded: TorchRec's torchrec.distributed.types.ParameterSharding.

    sharding_spec is None for data_parallel. cache_params, bounds_check_mode, output_dtype and
    key_value_params hold TorchRec or FBGEMM objects (CacheParams, BoundsCheckMode, DataType,
    KeyValueParams), which strait's form never sets: None here."""

    sharding_type: str
    compute_kernel: str
    ranks: Optional[List[int]] = None
    sharding_spec: Optional[EnumerableShardingSpec] = None
    cache_params: Optional[Any] = None
    enforce_hbm: Optional[bool] = None
    stochastic_rounding: Optional[bool] = None
    bounds_check_mode: Optional[Any] = None
    output_dtype: Optional[Any] = None
    key_value_params: Optional[Any] = None
    bag_size_hints: Optional[List[int]] = None


class EmbeddingModuleShardingPlan(Dict[str, ParameterSharding]):
    """One module's plan, its ParameterSharding per table name: TorchRec's
    torchrec.distributed.types.EmbeddingModuleShardingPlan (a dict)."""


@_dataclasses.dataclass
class ShardingPlan:
    """A model's plan, each module's plan by module path (e.g. "model.sparse.ebc"): TorchRec's
    torchrec.distributed.types.ShardingPlan."""

    plan: Dict[str, EmbeddingModuleShardingPlan]

    def get_plan_for_module(self, module_path: str) -> Optional[EmbeddingModuleShardingPlan]:
        """The plan of the module at `module_path`, None when the plan has none."""
        return self.plan.get(module_path)


class _Types:
    """The five classes load_plan builds a plan from."""

    def __init__(self, module):
        self.ShardingPlan = module.ShardingPlan
        self.EmbeddingModuleShardingPlan = module.EmbeddingModuleShardingPlan
        self.ParameterSharding = module.ParameterSharding
        self.EnumerableShardingSpec = module.EnumerableShardingSpec
        self.ShardMetadata = module.ShardMetadata


def _types(use_torchrec):
    own = _Types(_sys.modules[__name__])
    if use_torchrec is False:
        return own
    try:
        # torchrec.distributed.types re-exports PyTorch's EnumerableShardingSpec and ShardMetadata.
        import torchrec.distributed.types as torchrec_types
    except ImportError:
        if use_torchrec:
            raise
        return own
    return _Types(torchrec_types)


def _parameter_sharding(entry, types):
    """A ParameterSharding of one entry read_torchrec_file gives."""
    shards = [
        types.ShardMetadata(shard_offsets=s["shard_offsets"], shard_sizes=s["shard_sizes"],
                            placement=s["placement"])
        for s in entry["shards"]
    ]
    # Only what the file sets, so that a TorchRec without enforce_hbm or stochastic_rounding
    # (before 0.6) builds the same plan.
    flags = {k: entry[k] for k in ("enforce_hbm", "stochastic_rounding") if entry[k] is not None}
    return types.ParameterSharding(
        sharding_type=entry["sharding_type"],
        compute_kernel=entry["compute_kernel"],
        ranks=entry["ranks"],
        sharding_spec=types.EnumerableShardingSpec(shards) if shards else None,
        **flags,
    )


def load_plan(path, *, use_torchrec=None):
    """Reads a TorchRec sharding plan file (`strait plan --torchrec FILE`) as a ShardingPlan:
    TorchRec's where torchrec imports, else this module's dataclasses of the same names.

    use_torchrec: None (TorchRec's types when torchrec imports), True (TorchRec's; ImportError
    without it) or False (this module's dataclasses).
    The file gets the checks of `strait simulate --torchrec` that need no model
    (planner/torchrec_plan.hpp): known keys, a sharding type and a compute kernel strait
    models ("fused"; "dense" for data_parallel), shards of [row, column] offsets and sizes
    placed "rank:R/cuda:L" (none for data_parallel), ranks matching the shards, enforce_hbm
    and stochastic_rounding true, false or null, the "strait" block's group_size. The plan
    carries enforce_hbm and stochastic_rounding where the file sets them; bounds_check_mode
    is read and not carried (None).
    Raises strait.ConfigError naming the file and the JSON pointer for a bad file (malformed
    JSON, an unknown key, sharding type or kernel, a bad shard), with the text that command
    prints for it, strait.Error for a file that cannot be read.
    """
    types = _types(use_torchrec)
    read = _strait.read_torchrec_file(_os.fspath(path))
    plan = {module: types.EmbeddingModuleShardingPlan() for module in read["modules"]}
    for entry in read["entries"]:
        plan[entry["module"]][entry["table"]] = _parameter_sharding(entry, types)
    return types.ShardingPlan(plan=plan)
