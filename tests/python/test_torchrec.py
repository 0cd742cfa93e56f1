"""strait.torchrec.load_plan against the file `strait plan --torchrec` writes: each table's
sharding type, kernel and ranks and each shard's offsets, sizes and placement, field by field;
the classes' fields are TorchRec's and PyTorch's; errors are those `strait simulate --torchrec`
gives for the same file. torchrec is not needed: the path that builds TorchRec's own classes
runs against stand-ins with their constructors' signatures."""

import dataclasses
import json
import math
import sys
import types

import pytest

import strait
import strait.torchrec as st

DLRM = "configs/scenarios/dlrm-8gpu.json"
MODULE = "model.sparse.ebc"

# The fields of the classes load_plan builds, in order, as their sources define them: TorchRec's
# torchrec/distributed/types.py (pytorch/torchrec: ParameterSharding, ShardingPlan) and
# PyTorch's torch/distributed/_shard/metadata.py (ShardMetadata) and
# torch/distributed/_shard/sharding_spec/api.py (EnumerableShardingSpec).
TORCHREC_FIELDS = {
    "ParameterSharding": [
        "sharding_type", "compute_kernel", "ranks", "sharding_spec", "cache_params", "enforce_hbm",
        "stochastic_rounding", "bounds_check_mode", "output_dtype", "key_value_params",
        "bag_size_hints",
    ],
    "EnumerableShardingSpec": ["shards"],
    "ShardMetadata": ["shard_offsets", "shard_sizes", "placement", "bucket_id_offset", "num_buckets"],
    "ShardingPlan": ["plan"],
}
# The fields each constructor requires; every other one defaults to None.
REQUIRED = {
    "ParameterSharding": ["sharding_type", "compute_kernel"],
    "EnumerableShardingSpec": ["shards"],
    "ShardMetadata": ["shard_offsets", "shard_sizes"],
    "ShardingPlan": ["plan"],
}


@pytest.fixture(scope="module")
def written(cli, tmp_path_factory):
    """The TorchRec plan `strait plan` writes for dlrm-8gpu (4 evaluations), its tables
    under MODULE, as (path, document)."""
    path = tmp_path_factory.mktemp("torchrec") / "sharding.json"
    done = cli.run("plan", DLRM, "--evaluations", "4", "--torchrec", str(path),
                   "--torchrec-module", MODULE)
    assert done.returncode == 0, done.stderr
    with open(path, encoding="utf-8") as f:
        return path, json.load(f)


def tables_of_the_model():
    with open("configs/models/dlrm-v2.json", encoding="utf-8") as f:
        return {t["name"]: t for t in json.load(f)["embedding"]["tables"]}


def rank_of(placement):
    """R of "rank:R/cuda:L"."""
    return int(placement.split("/")[0].removeprefix("rank:"))


def test_every_table_and_shard_is_the_files(written):
    path, doc = written
    plan = st.load_plan(path, use_torchrec=False)
    assert type(plan) is st.ShardingPlan
    assert list(plan.plan) == list(doc["plan"]) == [MODULE]
    module = plan.get_plan_for_module(MODULE)
    assert type(module) is st.EmbeddingModuleShardingPlan and plan.get_plan_for_module("x") is None
    entries = doc["plan"][MODULE]
    assert list(module) == list(entries) and len(module) == 26
    for table, entry in entries.items():
        got = module[table]
        assert type(got) is st.ParameterSharding
        assert (got.sharding_type, got.compute_kernel, got.ranks) == (
            entry["sharding_type"], entry["compute_kernel"], entry["ranks"]), table
        for field in TORCHREC_FIELDS["ParameterSharding"][4:]:
            assert getattr(got, field) is None, (table, field)
        if entry["sharding_type"] == "data_parallel":
            assert "shards" not in entry and got.sharding_spec is None
            assert got.ranks == list(range(8))  # every rank of the 8-GPU group
            continue
        assert type(got.sharding_spec) is st.EnumerableShardingSpec
        shards = got.sharding_spec.shards
        assert [type(s) for s in shards] == [st.ShardMetadata] * len(entry["shards"])
        assert [(s.shard_offsets, s.shard_sizes, s.placement, s.bucket_id_offset, s.num_buckets)
                for s in shards] == [(e["shard_offsets"], e["shard_sizes"], e["placement"], None, None)
                                     for e in entry["shards"]], table
        assert got.ranks == [rank_of(s.placement) for s in shards], table
    # The plan found for this effort uses these types, so the checks above cover each.
    assert {e["sharding_type"] for e in entries.values()} == {
        "data_parallel", "table_wise", "column_wise", "row_wise"}


def test_the_shards_tile_each_table_of_the_model(written):
    path, _ = written
    model = tables_of_the_model()
    for table, sharding in st.load_plan(path, use_torchrec=False).plan[MODULE].items():
        rows, dim = model[table]["rows"], model[table]["dim"]
        if sharding.sharding_type == "data_parallel":
            continue
        shards = sharding.sharding_spec.shards
        # Disjoint rectangles whose areas add up to the table's tile it.
        assert sum(s.shard_sizes[0] * s.shard_sizes[1] for s in shards) == rows * dim, table
        for i, a in enumerate(shards):
            for b in shards[:i]:
                assert any(a.shard_offsets[d] >= b.shard_offsets[d] + b.shard_sizes[d]
                           or b.shard_offsets[d] >= a.shard_offsets[d] + a.shard_sizes[d]
                           for d in (0, 1)), (table, a, b)
        if sharding.sharding_type == "row_wise":
            # TorchRec's row blocks over the 8 ranks: ceil(rows / 8) rows each, the last shorter.
            per = math.ceil(rows / 8)
            assert [s.shard_sizes[0] for s in shards] == [min(per, rows - per * i) for i in range(8)]
            assert [s.shard_offsets[0] for s in shards] == [per * i for i in range(8)]
        if sharding.sharding_type == "column_wise":
            width = dim // len(shards)
            assert [s.shard_offsets[1] for s in shards] == [width * i for i in range(len(shards))]


def test_the_dataclasses_have_torchrecs_fields_in_order_and_defaults():
    for name, fields in TORCHREC_FIELDS.items():
        cls = getattr(st, name)
        assert [f.name for f in dataclasses.fields(cls)] == fields, name
        for f in dataclasses.fields(cls):
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            assert required == (f.name in REQUIRED[name]), (name, f.name)
            assert required or f.default is None, (name, f.name)
    assert issubclass(st.EmbeddingModuleShardingPlan, dict)


def test_torchrec_is_used_where_it_imports():
    try:
        import torchrec.distributed.types  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            st.load_plan("unread.json", use_torchrec=True)
        return
    pytest.skip("torchrec is installed: test_torchrecs_own_classes covers it")


def test_torchrecs_own_classes(written):
    torchrec_types = pytest.importorskip("torchrec.distributed.types")
    path, doc = written
    plan = st.load_plan(path)
    assert type(plan) is torchrec_types.ShardingPlan
    module = plan.plan[MODULE]
    assert type(module) is torchrec_types.EmbeddingModuleShardingPlan
    for table, entry in doc["plan"][MODULE].items():
        assert module[table].ranks == entry["ranks"]
        if "shards" in entry:
            assert [str(s.placement) for s in module[table].sharding_spec.shards] == [
                e["placement"] for e in entry["shards"]]
    assert plan._serialize()["plan"][MODULE].keys() == doc["plan"][MODULE].keys()


def stand_in_torchrec():
    """Modules torchrec, torchrec.distributed and torchrec.distributed.types whose classes take
    the arguments of TorchRec's and PyTorch's constructors (keyword-only here, so a misnamed
    one fails) and record them."""

    class Recorded:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    class ShardMetadata(Recorded):
        def __init__(self, *, shard_offsets, shard_sizes, placement=None, bucket_id_offset=None,
                     num_buckets=None):
            super().__init__(shard_offsets=shard_offsets, shard_sizes=shard_sizes,
                             placement=placement, bucket_id_offset=bucket_id_offset,
                             num_buckets=num_buckets)

    class EnumerableShardingSpec(Recorded):
        def __init__(self, shards):
            assert shards, "PyTorch refuses an empty shard list"
            super().__init__(shards=shards)

    class ParameterSharding(Recorded):
        def __init__(self, *, sharding_type, compute_kernel, ranks=None, sharding_spec=None,
                     cache_params=None, enforce_hbm=None, stochastic_rounding=None,
                     bounds_check_mode=None, output_dtype=None, key_value_params=None):
            super().__init__(sharding_type=sharding_type, compute_kernel=compute_kernel,
                             ranks=ranks, sharding_spec=sharding_spec, enforce_hbm=enforce_hbm)

    class EmbeddingModuleShardingPlan(dict):
        pass

    class ShardingPlan(Recorded):
        def __init__(self, *, plan):
            super().__init__(plan=plan)

    package, distributed = types.ModuleType("torchrec"), types.ModuleType("torchrec.distributed")
    module = types.ModuleType("torchrec.distributed.types")
    for cls in (ShardMetadata, EnumerableShardingSpec, ParameterSharding,
                EmbeddingModuleShardingPlan, ShardingPlan):
        setattr(module, cls.__name__, cls)
    package.distributed, distributed.types = distributed, module
    return {"torchrec": package, "torchrec.distributed": distributed,
            "torchrec.distributed.types": module}


def test_torchrecs_constructors_get_the_files_values(written, monkeypatch):
    path, doc = written
    fake = stand_in_torchrec()
    for name, module in fake.items():
        monkeypatch.setitem(sys.modules, name, module)
    plan = st.load_plan(path)
    types_ = fake["torchrec.distributed.types"]
    assert type(plan) is types_.ShardingPlan
    module = plan.kwargs["plan"][MODULE]
    assert type(module) is types_.EmbeddingModuleShardingPlan
    for table, entry in doc["plan"][MODULE].items():
        got = module[table].kwargs
        assert (got["sharding_type"], got["compute_kernel"], got["ranks"], got["enforce_hbm"]) == (
            entry["sharding_type"], entry["compute_kernel"], entry["ranks"], None)
        if "shards" not in entry:
            assert got["sharding_spec"] is None
            continue
        assert [s.kwargs for s in got["sharding_spec"].kwargs["shards"]] == [
            dict(e, bucket_id_offset=None, num_buckets=None) for e in entry["shards"]]
    assert type(st.load_plan(path, use_torchrec=False)) is st.ShardingPlan


# ---- errors: those of `strait simulate --torchrec` for the same file ----


def load_error(cli, path, kind=strait.ConfigError):
    with pytest.raises(kind) as raised:
        st.load_plan(path, use_torchrec=False)
    assert str(raised.value) == cli.error("simulate", DLRM, "--torchrec", str(path))
    return raised.value


def test_a_missing_file_is_a_strait_error_as_for_every_config(cli, tmp_path):
    path = tmp_path / "no-such.json"
    e = load_error(cli, path, strait.Error)
    assert not isinstance(e, strait.ConfigError)
    assert str(e) == f"{path}: cannot open file for reading"


def test_malformed_json_names_the_file_and_where(cli, written, tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(written[0].read_text()[:200])
    e = load_error(cli, path)
    assert (e.file, e.pointer) == (str(path), "")
    assert e.expectation.startswith("malformed JSON at line ")


def edited(written, tmp_path, edit):
    """The written plan with `edit(entries)` applied to its tables, in a new file."""
    doc = json.loads(written[0].read_text())
    edit(doc["plan"][MODULE])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def first_of(entries, sharding_type):
    return next(name for name, e in entries.items() if e["sharding_type"] == sharding_type)


def test_an_unknown_sharding_type_names_the_key_and_the_types(cli, written, tmp_path):
    path = edited(written, tmp_path, lambda t: t["cat_3"].update(sharding_type="table_wize"))
    e = load_error(cli, path)
    assert (e.file, e.pointer) == (str(path), f"/plan/{MODULE}/cat_3/sharding_type")
    assert e.expectation == (
        'expected one of "data_parallel", "table_wise", "row_wise", "column_wise", '
        '"table_row_wise", "grid_shard", got "table_wize"')


@pytest.mark.parametrize("edit, where, expectation", [
    (lambda t: t.update(cat_3=7), "/cat_3", "expected an object, got the number 7"),
    (lambda t: t["cat_3"].update(shardz=[]), "/cat_3/shardz", 'unknown key; did you mean "shards"?'),
    (lambda t: t["cat_3"].pop("compute_kernel"), "/cat_3/compute_kernel", "missing required key"),
    (lambda t: t["cat_3"]["shards"][0].update(placement="rank:3"), "/cat_3/shards/0/placement",
     'expected "rank:R/cuda:L" (a GPU), got "rank:3"'),
    (lambda t: t["cat_3"]["shards"][0].update(shard_sizes=[1]), "/cat_3/shards/0/shard_sizes",
     "expected [rows, columns]"),
    (lambda t: t["cat_3"]["shards"][0].update(shard_offsets=[0, -1]),
     "/cat_3/shards/0/shard_offsets/1", "expected a non-negative integer, got -1"),
    (lambda t: t["cat_3"]["shards"][0].update(num_buckets=4), "/cat_3/shards/0/num_buckets",
     "expected null: bucket-wise shards of a virtual (ZCH) table split rows by buckets, which "
     "strait does not model"),
    (lambda t: t["cat_3"].update(cache_params={"load_factor": 0.2}), "/cat_3/cache_params", None),
    (lambda t: t["cat_3"].update(ranks=[0, 1]), "/cat_3/ranks", "expected one rank per shard (1), got 2"),
    (lambda t: t["cat_3"].update(ranks=[t["cat_3"]["ranks"][0] ^ 1]), "/cat_3/ranks/0", None),
    (lambda t: t["cat_3"].update(sharding_type="row_wise", shards=None), "/cat_3",
     "expected shards for row_wise sharding"),
    (lambda t: t[first_of(t, "data_parallel")].update(shards=t["cat_3"]["shards"]), "DP/shards",
     "expected no shards: TorchRec writes none for data_parallel (every rank holds the whole table)"),
    # The kernels strait models, checked here as the command checks them.
    (lambda t: t["cat_3"].update(compute_kernel="fused_uvm_caching"), "/cat_3/compute_kernel",
     'expected one of the kernels strait models: "fused" (sharded tables: HBM, optimizer fused '
     'into the backward) or "dense" (data_parallel); got "fused_uvm_caching" for table_wise (UVM, '
     "caching, quantized, key-value and custom kernels are not modelled)"),
    (lambda t: t[first_of(t, "data_parallel")].update(compute_kernel="fused"), "DP/compute_kernel",
     None),
    (lambda t: t["cat_3"].update(enforce_hbm=1), "/cat_3/enforce_hbm",
     "expected true or false, got the number 1"),
    (lambda t: t["cat_3"].update(stochastic_rounding="yes"), "/cat_3/stochastic_rounding",
     'expected true or false, got the string "yes"'),
])
def test_a_bad_table_entry_fails_as_the_command_fails(cli, written, tmp_path, edit, where, expectation):
    entries = json.loads(written[0].read_text())["plan"][MODULE]
    assert entries["cat_3"]["sharding_type"] == "table_wise"  # the entry edited
    path = edited(written, tmp_path, edit)
    e = load_error(cli, path)
    where = where.replace("DP", "/" + first_of(entries, "data_parallel"))
    assert (e.file, e.pointer) == (str(path), f"/plan/{MODULE}{where}")
    if expectation is not None:
        assert e.expectation == expectation


def test_a_file_without_a_plan_or_with_a_module_of_no_tables_fails(cli, tmp_path):
    path = tmp_path / "plan.json"
    for doc, pointer, expectation in [
        ({"strait": {}}, "/plan", "missing required key"),
        ({"plan": {}, "plans": {}}, "/plans", 'unknown key; did you mean "plan"?'),
        ({"plan": {MODULE: [1]}}, f"/plan/{MODULE}", "expected a module's plan: an object of tables"),
        ({"plan": {}, "strait": {"group_size": 0}}, "/strait/group_size",
         "expected an integer in [1, 16777216], got 0"),
    ]:
        path.write_text(json.dumps(doc))
        e = load_error(cli, path)
        assert (e.pointer, e.expectation) == (pointer, expectation)


def test_numerics_flags_are_carried_and_bounds_check_mode_is_not(cli, written, tmp_path):
    """enforce_hbm and stochastic_rounding reach ParameterSharding where the file sets them
    (null: left at their default); bounds_check_mode is read and ignored, as the command
    ignores it, and the command simulates the same file."""
    def edit(t):
        t["cat_3"].update(enforce_hbm=True, stochastic_rounding=None,
                          bounds_check_mode="BoundsCheckMode.WARNING")
        t[first_of(t, "data_parallel")].update(stochastic_rounding=False, bounds_check_mode=2)
    entries = json.loads(written[0].read_text())["plan"][MODULE]
    path = edited(written, tmp_path, edit)
    module = st.load_plan(path, use_torchrec=False).plan[MODULE]
    dp = module[first_of(entries, "data_parallel")]
    assert (module["cat_3"].enforce_hbm, module["cat_3"].stochastic_rounding) == (True, None)
    assert (dp.enforce_hbm, dp.stochastic_rounding) == (None, False)
    assert module["cat_3"].bounds_check_mode is None and dp.bounds_check_mode is None
    done = cli.run("simulate", DLRM, "--torchrec", str(path), "--mode", "analytical")
    assert done.returncode == 0, done.stderr


def test_a_module_without_tables_stays_in_the_plan(tmp_path):
    """The file's modules in the reader's order (by name), one without tables too."""
    path = tmp_path / "plan.json"
    dp = {"sharding_type": "data_parallel", "compute_kernel": "dense", "ranks": [0, 1]}
    path.write_text(json.dumps({"plan": {"z.ebc": {"b": dp, "a": dp}, "m.ec": {}}}))
    plan = st.load_plan(path, use_torchrec=False)
    assert list(plan.plan) == ["m.ec", "z.ebc"]
    assert plan.plan["m.ec"] == {} and list(plan.plan["z.ebc"]) == ["a", "b"]
    assert plan.plan["z.ebc"]["a"] == st.ParameterSharding("data_parallel", "dense", ranks=[0, 1])
