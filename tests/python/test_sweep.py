"""strait.sweep against `strait sweep`: the same CSV and JSON Lines, apart from the
wall-clock columns, and the same error for a bad sweep file."""

import json

import pytest

import strait
from conftest import without_wall_times

QUICK = "configs/sweeps/dlrm-8gpu-quick.json"  # 24 points, 4 steps each
WALL_COLUMNS = ["build_wall_s", "sim_wall_s", "wall_s"]


def test_sweep_equals_the_cli(cli, tmp_path):
    csv, jsonl = tmp_path / "q.csv", tmp_path / "q.jsonl"
    done = cli.run("sweep", QUICK, "--csv", str(csv), "--jsonl", str(jsonl), "--threads", "2")
    assert done.returncode == 0, done.stderr
    result = strait.sweep(QUICK, threads=2)
    assert (result.name, result.points, result.failed) == ("dlrm-8gpu-quick", 24, 0)
    assert repr(result) == "<strait.SweepResult 'dlrm-8gpu-quick': 24 points, 0 failed>"
    pandas = pytest.importorskip("pandas")
    expected = pandas.read_csv(csv)
    frame = result.frame()
    assert list(frame.columns) == list(expected.columns)
    assert len(frame) == 24
    pandas.testing.assert_frame_equal(frame.drop(columns=WALL_COLUMNS), expected.drop(columns=WALL_COLUMNS))
    with open(jsonl, encoding="utf-8") as f:
        lines = [without_wall_times(json.loads(line)) for line in f]
    assert [without_wall_times(r) for r in result.rows] == lines
    assert result.rows[0]["axes"] == {"nvlink_gbs": 150, "batch_per_rank": 512, "network_mode": "flow"}
    assert result.csv.splitlines()[0] == csv.read_text().splitlines()[0]


def test_a_bad_sweep_file_is_the_cli_config_error(cli, tmp_path):
    sweep = tmp_path / "bad.json"
    sweep.write_text(json.dumps({"scenario": "no-such.json", "axes": []}))
    with pytest.raises(strait.ConfigError) as raised:
        strait.sweep(sweep)
    e = raised.value
    assert (e.file, e.pointer) == (str(sweep), "/scenario")
    assert str(e) == cli.error("sweep", str(sweep), "--list")
