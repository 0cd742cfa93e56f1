"""strait.simulate against `strait simulate --json`: the same report, key for key, apart
from the wall-clock keys (build_wall_s, sim_wall_s)."""

import pytest

import strait
from conftest import edit_json, without_wall_times


@pytest.mark.parametrize(
    "path", ["configs/scenarios/hstu-3dc.json", "configs/scenarios/dlrm-8gpu.json"]
)
def test_step_time_and_report_equal_the_cli(cli, path):
    expected = cli.json("simulate", path)
    result = strait.simulate(strait.Scenario.load(path))
    assert isinstance(result, strait.Result)
    assert result.step_time_ms == expected["step_time_ms"]
    assert without_wall_times(result.to_dict()) == without_wall_times(expected)


def test_mode_overrides_the_scenario_as_the_cli_option(cli):
    path = "configs/scenarios/hstu-3dc.json"
    expected = cli.json("simulate", path, "--mode", "analytical")
    result = strait.simulate(path, mode="analytical")
    assert result.mode == "analytical"
    assert without_wall_times(result.to_dict()) == without_wall_times(expected)


def test_steps_run_as_the_scenario_file_with_those_steps(cli, configs_copy):
    path = "configs/scenarios/dlrm-8gpu.json"
    edit_json(configs_copy / path, "/steps", 3)
    expected = cli.json("simulate", path, cwd=configs_copy)
    result = strait.simulate(path, steps=3)
    assert result["steps"] == 3 and len(result.step_times_ms) == 3
    assert without_wall_times(result.to_dict()) == without_wall_times(expected)


def test_profiles_is_the_default_folder_of_the_cli_option(cli):
    path = "configs/scenarios/dlrm-8gpu.json"
    default = strait.simulate(path)
    named = strait.simulate(path, profiles=strait.default_profiles_dir)
    assert without_wall_times(named.to_dict()) == without_wall_times(default.to_dict())
    with pytest.raises(strait.Error) as raised:
        strait.simulate(path, profiles="no/such/profiles")
    assert str(raised.value) == cli.error("simulate", path, "--profiles", "no/such/profiles")


def test_a_collectives_scenario_gives_the_cli_report(cli):
    path = "configs/scenarios/collectives-3dc.json"
    expected = cli.json("simulate", path)
    result = strait.simulate(strait.Scenario.load(path))
    assert isinstance(result, strait.CollectiveResult)
    assert result.makespan_ms == expected["makespan_ms"]
    assert without_wall_times(result.to_dict()) == without_wall_times(expected)
    assert list(result.collectives().index) == [c["name"] for c in expected["collectives"]]
    assert result.traffic().loc["all"].to_dict() == expected["traffic_bytes"]
    assert repr(result).startswith("<strait.CollectiveResult 'collectives-3dc': 5 collectives in ")


def test_a_collectives_scenario_in_analytical_mode(cli):
    path = "configs/scenarios/collectives-3dc.json"
    expected = cli.json("simulate", path, "--mode", "analytical")
    result = strait.simulate(path, mode="analytical")
    assert without_wall_times(result.to_dict()) == without_wall_times(expected)


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="expected 'flow' or 'analytical', got 'fast'"):
        strait.simulate("configs/scenarios/dlrm-8gpu.json", mode="fast")
    with pytest.raises(ValueError, match="a collectives scenario has no steps"):
        strait.simulate("configs/scenarios/collectives-3dc.json", steps=2)
    with pytest.raises(TypeError, match="expected a strait.Scenario or a scenario file's path"):
        strait.simulate(42)
