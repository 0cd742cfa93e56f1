"""Errors: strait.ConfigError (.file, .pointer, .expectation) for a config's, strait.Error
for the others, each with the text the command prints after "strait: error: "."""

import json

import pytest

import strait
from conftest import edit_json

HSTU = "configs/scenarios/hstu-3dc.json"


def sweep_error(cli, folder, pointer, value):
    """The message `strait sweep --list` gives for a sweep file in folder/configs/sweeps whose
    "set" block sets `value` at `pointer` of hstu-3dc, and the location it names."""
    sweep = folder / "configs/sweeps/probe.json"
    sweep.write_text(json.dumps({
        "scenario": "../scenarios/hstu-3dc.json",
        "set": {pointer: value},
        "axes": [{"name": "seed", "pointer": "/scenario/seed", "values": [1]}],
    }))
    message = cli.error("sweep", "configs/sweeps/probe.json", "--list", cwd=folder)
    escaped = pointer.replace("~", "~0").replace("/", "~1")
    location = f"configs/sweeps/probe.json: /set/{escaped}: "
    assert message.startswith(location), message
    return message[len(location):]


def test_a_missing_file_is_an_error_with_the_cli_text(cli):
    with pytest.raises(strait.Error) as raised:
        strait.Scenario.load("configs/scenarios/no-such.json")
    assert not isinstance(raised.value, strait.ConfigError)
    assert str(raised.value) == cli.error("simulate", "configs/scenarios/no-such.json")
    assert str(raised.value) == "configs/scenarios/no-such.json: cannot open file for reading"


def test_a_bad_scenario_file_fails_where_it_is_loaded(cli, configs_copy):
    path = str(configs_copy / HSTU)
    edit_json(path, "/steps", 0)
    with pytest.raises(strait.ConfigError) as raised:
        strait.Scenario.load(path)
    e = raised.value
    assert (e.file, e.pointer, e.expectation) == (path, "/steps", "expected 1..1000 steps, got 0")
    assert str(e) == cli.error("simulate", path)


def test_a_bad_value_is_the_config_error_of_the_edited_file(cli, configs_copy):
    pointer = "/cross_dc/0/bandwidth"
    edit_json(configs_copy / "configs/clusters/scale-across-3dc.json", pointer, "fast")
    expected = cli.error("simulate", HSTU, cwd=configs_copy)
    s = strait.Scenario.load(HSTU)
    s.override("/cluster" + pointer, "fast")  # judged when the scenario is built
    with pytest.raises(strait.ConfigError) as raised:
        strait.simulate(s)
    e = raised.value
    assert (e.file, e.pointer) == ("configs/clusters/scale-across-3dc.json", pointer)
    assert str(e) == expected == f"{e.file}: {e.pointer}: {e.expectation}"


def test_a_bad_pointer_is_refused_with_the_sweep_file_expectation(cli, configs_copy):
    s = strait.Scenario.load(HSTU)
    for pointer in ["/nowhere/x", "/cluster", "/cluster/no_such_key/x", "/cluster/cross_dc/9/bandwidth",
                    "/scenario/cluster/cross_dc"]:
        with pytest.raises(strait.ConfigError) as raised:
            s.override(pointer, 1)
        e = raised.value
        assert (e.file, e.pointer) == (HSTU, pointer)
        assert e.expectation == sweep_error(cli, configs_copy, pointer, 1)
    assert s.overrides == []  # nothing refused was kept
    assert "/cluster/no_such_key/x does not lead into configs/clusters/scale-across-3dc.json" in str(
        pytest.raises(strait.ConfigError, s.override, "/cluster/no_such_key/x", 1).value)


def test_a_missing_part_file_is_refused_with_the_sweep_file_expectation(cli, configs_copy):
    s = strait.Scenario.load(HSTU)
    with pytest.raises(strait.ConfigError) as raised:
        s.override("/scenario/plan", "../plans/no-such.json")
    e = raised.value
    assert (e.file, e.pointer) == (HSTU, "/scenario/plan")
    assert e.expectation == "plan file 'configs/plans/no-such.json' does not exist"
    assert e.expectation == sweep_error(cli, configs_copy, "/scenario/plan", "../plans/no-such.json")


def test_a_collectives_scenario_has_no_model():
    s = strait.Scenario.load("configs/scenarios/collectives-3dc.json")
    with pytest.raises(strait.ConfigError, match="a collectives scenario has no model"):
        s.override("/model/name", "x")


def test_other_strait_errors_are_strait_errors(cli, configs_copy):
    edit_json(configs_copy / HSTU, "/max_work", 1000)
    expected = cli.error("simulate", HSTU, cwd=configs_copy)
    s = strait.Scenario.load(HSTU)
    s.override("/scenario/max_work", 1000)
    with pytest.raises(strait.Error) as raised:
        strait.simulate(s)
    assert not isinstance(raised.value, strait.ConfigError)
    assert str(raised.value) == expected
    assert issubclass(strait.ConfigError, strait.Error)


def test_values_that_are_no_json_are_type_errors():
    s = strait.Scenario.load(HSTU)
    with pytest.raises(TypeError, match="/scenario/seed: expected a JSON value"):
        s.override("/scenario/seed", object())
    with pytest.raises(TypeError, match="expected str keys"):
        s.override("/scenario/hardware", {1: 2})
