"""The tables of a Result (pandas DataFrames) hold the report's figures and its invariants:
the counted steps average to step_time_ms, each breakdown column adds up to the mean over
every step, the traffic rows are the report's."""

import sys

import pytest

import strait

PATH = "configs/scenarios/hstu-3dc.json"  # 8 steps: 4 warm up, 1 drains, 3 counted


@pytest.fixture(scope="module")
def result():
    return strait.simulate(PATH)


def test_report_keys_read_as_attributes_and_items(result):
    report = result.to_dict()
    assert result.mfu == report["mfu"] and result["steps"] == report["steps"] == 8
    assert set(result.keys()) == set(report)
    with pytest.raises(AttributeError, match="Result has no 'step_time'; its keys: "):
        result.step_time
    assert repr(result).startswith("<strait.Result 'hstu-3dc': ")
    assert strait.Result(result.to_dict()) == result
    assert strait.Result(dict(report, mfu=0.5)) != result


def test_steps_phases_and_the_counted_mean(result):
    steps = result.steps()
    state = result.steady_state
    assert list(steps.index) == list(range(8))
    assert list(steps["time_ms"]) == result.step_times_ms
    assert list(steps["phase"]) == ["warmup"] * 4 + ["steady"] * 3 + ["drain"]
    assert (state["warmup_steps"], state["drain_steps"], state["counted_steps"]) == (4, 1, 3)
    counted = steps[steps["counted"]]["time_ms"]
    assert len(counted) == 3
    assert counted.mean() == pytest.approx(result.step_time_ms, rel=1e-12)


def test_breakdown_columns_add_up_to_the_mean_over_every_step(result):
    frame = result.breakdown()
    assert list(frame.columns) == ["average_ms", "critical_ms"]
    assert frame.loc["compute", "average_ms"] == result.breakdown_ms["compute"]
    assert frame.loc["straggler_wait", "critical_ms"] == result.breakdown_critical_ms["straggler_wait"]
    mean = result.steady_state["all_steps_mean_ms"]
    assert frame["average_ms"].sum() == pytest.approx(mean, rel=1e-9)
    assert frame["critical_ms"].sum() == pytest.approx(mean, rel=1e-9)


def test_memory_terms(result):
    frame = result.memory()
    assert frame["gib"].to_dict() == result.memory_terms_gib
    assert frame["gib"].sum() == pytest.approx(result.peak_memory_gib, rel=1e-9)


def test_traffic_rows_are_the_purposes_then_all(result):
    frame = result.traffic()
    purposes = list(result.traffic_bytes_by_comm_class)
    assert list(frame.index) == purposes + ["all"]
    assert frame.loc["all"].to_dict() == result.traffic_bytes
    for purpose in purposes:
        assert frame.loc[purpose].to_dict() == result.traffic_bytes_by_comm_class[purpose]
    assert frame.loc["replica_sync", "cross_dc"] > 0


def test_without_pandas_the_tables_say_what_to_install(result, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"Result.breakdown\(\) returns a pandas DataFrame and needs pandas"):
        result.breakdown()
    assert result.to_dict()["breakdown_ms"] == result.breakdown_ms
