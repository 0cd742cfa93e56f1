"""strait.Scenario: loading, from dicts, overrides by the sweep files' JSON pointers, to_dict.
An override runs as the command runs a scenario file edited the same way."""

import copy
import json

import pytest

import strait
from conftest import edit_json, without_wall_times

DLRM = "configs/scenarios/dlrm-8gpu.json"
HSTU = "configs/scenarios/hstu-3dc.json"
COLLECTIVES = "configs/scenarios/collectives-3dc.json"


def read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def report(result):
    return without_wall_times(result.to_dict())


def test_load_names_the_file_and_kind():
    s = strait.Scenario.load(DLRM)
    assert (s.file, s.kind, s.overrides) == (DLRM, "training", [])
    assert repr(s) == "<strait.Scenario 'configs/scenarios/dlrm-8gpu.json' (training)>"
    c = strait.Scenario.load(COLLECTIVES)
    assert c.kind == "collectives"


def test_to_dict_inlines_the_parts_as_their_files_hold_them():
    d = strait.Scenario.load(DLRM).to_dict()
    assert d["name"] == "dlrm-8gpu" and d["steps"] == 5
    assert d["cluster"] == read("configs/clusters/hgx-h100-8.json")
    assert d["model"] == read("configs/models/dlrm-v2.json")
    assert d["data"] == read("configs/data/criteo-1tb-multihot.json")
    assert d["plan"] == read("configs/plans/dlrm-8gpu.json")


def test_from_dicts_runs_as_the_scenario_file(cli):
    expected = cli.json("simulate", DLRM)
    parts = {k: read(f"configs/{folder}/{name}.json") for k, folder, name in [
        ("cluster", "clusters", "hgx-h100-8"), ("model", "models", "dlrm-v2"),
        ("data", "data", "criteo-1tb-multihot"), ("plan", "plans", "dlrm-8gpu")]}
    from_dicts = strait.Scenario.from_dicts(**parts, name="dlrm-8gpu", steps=5, seed=1, mode="flow")
    assert from_dicts.file == "<dicts>"
    assert report(strait.simulate(from_dicts)) == without_wall_times(expected)
    # Parts as paths (relative to the working directory), and to_dict() back again.
    from_paths = strait.Scenario.from_dicts(
        cluster="configs/clusters/hgx-h100-8.json", model="configs/models/dlrm-v2.json",
        data="configs/data/criteo-1tb-multihot.json", plan="configs/plans/dlrm-8gpu.json",
        name="dlrm-8gpu", steps=5, seed=1)
    assert report(strait.simulate(from_paths)) == without_wall_times(expected)
    again = strait.Scenario.from_dicts(**strait.Scenario.load(DLRM).to_dict())
    assert report(strait.simulate(again)) == without_wall_times(expected)


def test_override_runs_as_the_file_edited_the_same_way(cli, configs_copy):
    pointer, value = "/cross_dc/0/latency", "50 ms"
    edit_json(configs_copy / "configs/clusters/scale-across-3dc.json", pointer, value)
    expected = cli.json("simulate", HSTU, "--mode", "analytical", cwd=configs_copy)
    s = strait.Scenario.load(HSTU)
    s.override("/cluster" + pointer, value)
    assert s.overrides == [("/cluster/cross_dc/0/latency", "50 ms")]
    edited = strait.simulate(s, mode="analytical")
    assert report(edited) == without_wall_times(expected)
    # The override took effect: 50 ms instead of 5 between east and central lengthens the
    # step (40.8 ms to 100.0 ms).
    plain = strait.simulate(HSTU, mode="analytical")
    assert edited.step_time_ms > plain.step_time_ms + 50
    assert s.to_dict()["cluster"]["cross_dc"][0]["latency"] == "50 ms"


def test_scenario_pointers_edit_the_scenario_file_and_pick_part_files(cli, configs_copy):
    # The command runs a scenario file with another seed and an inline plan (the bundled one
    # with pipeline depth 1); the module makes the same edits by pointer.
    plan = read("configs/plans/dlrm-8gpu.json")
    edit_json(configs_copy / DLRM, "/seed", 7)
    edit_json(configs_copy / DLRM, "/plan", dict(plan, schedule=dict(plan["schedule"], pipeline_depth=1)))
    expected = cli.json("simulate", DLRM, cwd=configs_copy)
    s = strait.Scenario.load(DLRM)
    s.override("/scenario/seed", 7)
    s.override("/scenario/plan", plan)
    s.override("/plan/schedule/pipeline_depth", 1)
    edited = strait.simulate(s)
    assert report(edited) == without_wall_times(expected)
    assert edited.step_time_ms != strait.simulate(DLRM).step_time_ms
    # Back to the plan file: the /plan edit applies to whichever plan is picked, as in a sweep.
    s.override("/scenario/plan", "../plans/dlrm-8gpu.json")
    assert s.to_dict()["plan"] == dict(plan, schedule=dict(plan["schedule"], pipeline_depth=1))


def test_with_overrides_and_copies_leave_the_original_alone():
    s = strait.Scenario.load(DLRM)
    t = s.with_overrides({"/scenario/steps": 2, "/scenario/seed": 3})
    assert s.overrides == [] and t.overrides == [("/scenario/steps", 2), ("/scenario/seed", 3)]
    u = copy.copy(t)
    u.override("/scenario/mode", "analytical")
    assert len(t.overrides) == 2 and len(u.overrides) == 3
    assert copy.deepcopy(u).overrides == u.overrides
    assert repr(u) == "<strait.Scenario 'configs/scenarios/dlrm-8gpu.json' (training, 3 overrides)>"
    assert strait.simulate(t)["steps"] == 2


def test_a_collectives_scenario_takes_cluster_overrides(cli, configs_copy):
    pointer, value = "/defaults/host/nvlink/bandwidth", "300 GB/s"
    edit_json(configs_copy / "configs/clusters/scale-across-3dc.json", pointer, value)
    expected = cli.json("simulate", COLLECTIVES, "--mode", "analytical", cwd=configs_copy)
    s = strait.Scenario.load(COLLECTIVES)
    s.override("/cluster" + pointer, value)
    edited = strait.simulate(s, mode="analytical")
    assert report(edited) == without_wall_times(expected)
    assert edited.makespan_ms != strait.simulate(COLLECTIVES, mode="analytical").makespan_ms
    assert s.to_dict()["cluster"]["defaults"]["host"]["nvlink"]["bandwidth"] == "300 GB/s"
