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
is left out. load_plan checks what it builds the objects from, as
`strait simulate SCENARIO --torchrec FILE` checks it (that command also checks the plan
against the model: every table once, shards that tile it, kernels it models). A bad file
raises strait.ConfigError (.file, .pointer, .expectation) with that command's text, a file
that cannot be read strait.Error.
"""

import dataclasses as _dataclasses
import json as _json
import os as _os
import re as _re
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


# ---- reading, with the messages of strait's config reader (sim/core/config_node.cpp) ----


def _escape(token):
    return token.replace("~", "~0").replace("/", "~1")


def _type_name(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return f'the string "{value}"'
    return f"the number {_json.dumps(value)}"


def _edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diagonal, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            up = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1]))
            diagonal = up
    return row[len(b)]


def _closest(word, candidates):
    best, best_distance = "", max(2, len(word) // 3) + 1
    for candidate in candidates:
        d = _edit_distance(word, candidate)
        if d < best_distance:
            best, best_distance = candidate, d
    return best


class _Node:
    """A value of the file and its JSON pointer."""

    __slots__ = ("file", "value", "pointer")

    def __init__(self, file, value, pointer=""):
        self.file, self.value, self.pointer = file, value, pointer

    def fail(self, expectation):
        e = _strait.ConfigError(f"{self.file}: {self.pointer or '/'}: {expectation}")
        e.file, e.pointer, e.expectation = self.file, self.pointer, expectation
        raise e

    def child(self, value, token):
        return _Node(self.file, value, f"{self.pointer}/{_escape(str(token))}")

    def object(self):
        if not isinstance(self.value, dict):
            self.fail(f"expected an object, got {_type_name(self.value)}")
        return self.value

    def at(self, key):
        value = self.object()
        if key not in value:
            _Node(self.file, None, f"{self.pointer}/{_escape(key)}").fail("missing required key")
        return self.child(value[key], key)

    def is_null(self, key):
        return self.object().get(key) is None

    def allow_only(self, allowed):
        for key in self.object():
            if key not in allowed:
                hint = _closest(key, allowed)
                self.child(None, key).fail(
                    f'unknown key; did you mean "{hint}"?'
                    if hint
                    else f"unknown key (known keys: {', '.join(allowed)})"
                )

    def elements(self):
        if not isinstance(self.value, list):
            self.fail(f"expected an array, got {_type_name(self.value)}")
        return [self.child(v, i) for i, v in enumerate(self.value)]

    def string(self):
        if not isinstance(self.value, str):
            self.fail(f"expected a string, got {_type_name(self.value)}")
        return self.value

    def non_negative(self):
        if not isinstance(self.value, int) or isinstance(self.value, bool):
            self.fail(f"expected an integer, got {_type_name(self.value)}")
        if self.value < 0:
            self.fail(f"expected a non-negative integer, got {self.value}")
        return self.value


_ENTRY_KEYS = [
    "sharding_type", "compute_kernel", "ranks", "shards", "sharding_spec", "cache_params",
    "enforce_hbm", "stochastic_rounding", "bounds_check_mode", "output_dtype", "key_value_params",
]
_SHARD_KEYS = ["shard_offsets", "shard_sizes", "placement", "bucket_id_offset", "num_buckets"]
_PLACEMENT = _re.compile(r"rank:([0-9]+)/cuda:[0-9]+")


def _shard(node, types):
    node.allow_only(_SHARD_KEYS)
    for key in ("bucket_id_offset", "num_buckets"):
        if not node.is_null(key):
            node.at(key).fail(
                "expected null: bucket-wise shards of a virtual (ZCH) table split rows by "
                "buckets, which strait does not model"
            )

    def pair(key, what):
        n = node.at(key)
        if not isinstance(n.value, list) or len(n.value) != 2:
            n.fail(f"expected {what}")
        return [e.non_negative() for e in n.elements()]

    offsets = pair("shard_offsets", "[row offset, column offset]")
    sizes = pair("shard_sizes", "[rows, columns]")
    placement = node.at("placement")
    text = placement.string()
    match = _PLACEMENT.fullmatch(text)
    if not match:
        placement.fail(f'expected "rank:R/cuda:L" (a GPU), got "{text}"')
    shard = types.ShardMetadata(shard_offsets=offsets, shard_sizes=sizes, placement=text)
    return shard, int(match[1])


def _optional_bool(node, key):
    if node.is_null(key):
        return None
    n = node.at(key)
    if not isinstance(n.value, bool):
        n.fail(f"expected true, false or null, got {_type_name(n.value)}")
    return n.value


def _parameter_sharding(entry, types):
    entry.allow_only(_ENTRY_KEYS)
    type_node = entry.at("sharding_type")
    sharding_type = type_node.string()
    if sharding_type not in SHARDING_TYPES:
        listed = ", ".join(f'"{t}"' for t in SHARDING_TYPES)
        type_node.fail(f'expected one of {listed}, got "{sharding_type}"')
    compute_kernel = entry.at("compute_kernel").string()
    for key in ("cache_params", "output_dtype", "key_value_params"):
        if not entry.is_null(key):
            entry.at(key).fail(
                "expected null: UVM caching, another output type or a key-value store change the "
                "lookup in ways strait does not model"
            )
    if not entry.is_null("bounds_check_mode"):
        entry.at("bounds_check_mode").fail("expected null: TorchRec's plan form writes no BoundsCheckMode")
    flags = {k: _optional_bool(entry, k) for k in ("enforce_hbm", "stochastic_rounding")}
    shards = []
    if not entry.is_null("shards"):
        shards = [_shard(n, types) for n in entry.at("shards").elements()]
    ranks = None
    if not entry.is_null("ranks"):
        ranks = [(n.non_negative(), n) for n in entry.at("ranks").elements()]
    if sharding_type == "data_parallel":
        if shards:
            entry.at("shards").fail(
                "expected no shards: TorchRec writes none for data_parallel (every rank holds "
                "the whole table)"
            )
    else:
        if not shards:
            entry.fail(f"expected shards for {sharding_type} sharding")
        if ranks and len(ranks) != len(shards):
            entry.at("ranks").fail(f"expected one rank per shard ({len(shards)}), got {len(ranks)}")
        for i, (rank, node) in enumerate(ranks or []):
            placed = shards[i][1]
            if rank != placed:
                node.fail(f"expected {placed}, the rank of {entry.pointer}/shards/{i}'s placement")
    spec = types.EnumerableShardingSpec([s for s, _ in shards]) if shards else None
    # Only what the file sets, so that a TorchRec without enforce_hbm or stochastic_rounding
    # (before 0.6) builds the same plan.
    extra = {k: v for k, v in flags.items() if v is not None}
    return types.ParameterSharding(
        sharding_type=sharding_type,
        compute_kernel=compute_kernel,
        ranks=None if ranks is None else [r for r, _ in ranks],
        sharding_spec=spec,
        **extra,
    )


def load_plan(path, *, use_torchrec=None):
    """Reads a TorchRec sharding plan file (`strait plan --torchrec FILE`) as a ShardingPlan:
    TorchRec's where torchrec imports, else this module's dataclasses of the same names.

    use_torchrec: None (TorchRec's types when torchrec imports), True (TorchRec's; ImportError
    without it) or False (this module's dataclasses).
    Raises strait.ConfigError naming the file and the JSON pointer for a bad file (malformed
    JSON, an unknown key or sharding type, a bad shard), strait.Error for a file that cannot
    be read.
    """
    types = _types(use_torchrec)
    file = _os.fspath(path)
    root = _Node(file, _strait.load_json(file))
    root.allow_only(["plan", "strait"])
    modules = root.at("plan")
    plan = {}
    for module_path in modules.object():
        module = modules.at(module_path)
        if not isinstance(module.value, dict):
            module.fail("expected a module's plan: an object of tables")
        module_plan = types.EmbeddingModuleShardingPlan()
        for table in module.value:
            module_plan[table] = _parameter_sharding(module.at(table), types)
        plan[module_path] = module_plan
    return types.ShardingPlan(plan=plan)

