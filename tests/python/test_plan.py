"""strait.plan against `strait plan`: the same report (--json), plan (--out), TorchRec plan
(--torchrec) and launch plan (--launch -, its job relative to the working directory). The
search's effort is counted, so both find the same plan."""

import json

import pytest

import strait

DLRM = "configs/scenarios/dlrm-8gpu.json"


def cli_outputs(cli, tmp_path, *args):
    done = cli.run("plan", DLRM, "--evaluations", "4", *args, "--json", str(tmp_path / "report.json"),
                   "--out", str(tmp_path / "plan.json"), "--torchrec", str(tmp_path / "torchrec.json"),
                   "--launch", "-")
    assert done.returncode == 0, done.stderr
    out = {"launch": json.loads(done.stdout)}
    for key in ["report", "plan", "torchrec"]:
        with open(tmp_path / f"{key}.json", encoding="utf-8") as f:
            out[key] = json.load(f)
    return out


def test_plan_equals_the_cli(cli, tmp_path):
    expected = cli_outputs(cli, tmp_path)
    found = strait.plan(DLRM, evaluations=4)
    assert found.found is True
    for key in ["report", "plan", "torchrec", "launch"]:
        assert found[key] == expected[key], key
    assert found.launch["job"]["cluster"] == "configs/clusters/hgx-h100-8.json"
    assert repr(found) == "<strait.PlanResult found=True>"


def test_an_overridden_part_goes_inline_into_the_launch_job(cli):
    s = strait.Scenario.load(DLRM)
    s.override("/scenario/steps", 3)
    s.override("/data/batch_size/per_rank", 1024)
    found = strait.plan(s, evaluations=2, top=1, mode="analytical")
    job = found.launch["job"]
    assert job["cluster"] == "configs/clusters/hgx-h100-8.json"  # unedited: by its file
    assert job["data"] == s.to_dict()["data"] and job["data"]["batch_size"]["per_rank"] == 1024
    assert found.report["final_mode"] == "analytical" and len(found.report["top"]) == 1


def test_plan_arguments_and_scenarios_are_checked():
    with pytest.raises(ValueError, match="evaluations: expected a count of final-mode simulations"):
        strait.plan(DLRM, evaluations=0)
    with pytest.raises(ValueError, match="budget: expected a positive number of seconds"):
        strait.plan(DLRM, budget=0)
    with pytest.raises(strait.ConfigError) as raised:
        strait.plan("configs/scenarios/collectives-3dc.json")
    e = raised.value
    assert (e.file, e.pointer) == ("configs/scenarios/collectives-3dc.json", "/collectives")


def test_the_entrypoint_is_what_every_launch_line_runs():
    command = "python -m my_trainer --config c.yaml"
    found = strait.plan(DLRM, evaluations=2, top=1, mode="analytical", entrypoint=command)
    launch = found.launch
    assert launch["entrypoint"] == command
    # A command that names its Python: torchrun runs it with --no-python, srun and mpirun as is.
    assert all(line.endswith(" --no-python " + command) for line in launch["launch"]["torchrun"])
    assert launch["launch"]["srun"].endswith(" --cpu-bind=none " + command)
    assert launch["launch"]["mpirun"].endswith(" --bind-to none " + command)
    with pytest.warns(DeprecationWarning, match="use entrypoint="):
        old = strait.plan(DLRM, evaluations=2, top=1, mode="analytical", program=command)
    assert old.launch == found.launch
    placeholder = strait.plan(DLRM, evaluations=2, top=1, mode="analytical").launch
    assert placeholder["entrypoint"] == "train.py --plan plan.json --launch launch.json"
    with pytest.raises(TypeError, match="not both"):
        strait.plan(DLRM, entrypoint=command, program=command)
    with pytest.raises(ValueError, match="entrypoint: expected a command"):
        strait.plan(DLRM, evaluations=2, entrypoint=" ")
