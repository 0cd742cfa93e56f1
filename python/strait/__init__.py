"""strait from Python: simulate, plan and sweep recommendation-model training on GPU clusters.

    import strait

    scenario = strait.Scenario.load("configs/scenarios/hstu-3dc.json")
    scenario.override("/cluster/cross_dc/0/bandwidth", "100 Gb/s")
    result = strait.simulate(scenario, mode="analytical")
    print(result.step_time_ms, result.mfu)
    result.breakdown()  # a pandas DataFrame

Every figure is what `strait simulate --json` prints for the same scenario: the module runs
strait's C++ libraries, the ones the command runs. Errors are strait.ConfigError (a config
file's: .file, .pointer, .expectation) and strait.Error (any other of strait's), their text
what the command prints after "strait: error: ". Simulations release the GIL, so Python
threads run scenarios side by side. strait.torchrec.load_plan(path) reads the TorchRec
sharding plan `strait plan --torchrec` writes as TorchRec's ShardingPlan. python/README.md
says more.
"""

import copy as _copy
import json as _json
import os as _os
import tempfile as _tempfile
import warnings as _warnings

from . import _strait, torchrec

__all__ = [
    "CollectiveResult",
    "ConfigError",
    "Error",
    "PlanResult",
    "Result",
    "Scenario",
    "SweepResult",
    "default_profiles_dir",
    "plan",
    "simulate",
    "sweep",
    "torchrec",
]

Error = _strait.Error
ConfigError = _strait.ConfigError
Error.__module__ = "strait"
ConfigError.__module__ = "strait"

#: The calibration profiles of a scenario that names none (the CLI's default).
default_profiles_dir = _strait.default_profiles_dir


def _pandas(what):
    try:
        import pandas
    except ImportError as e:
        raise ImportError(
            f"strait: {what} returns a pandas DataFrame and needs pandas "
            "(Debian 12: apt-get install python3-pandas); the same figures are in .to_dict()"
        ) from e
    return pandas


def _optional_path(path):
    return None if path is None else _os.fspath(path)


class Scenario:
    """A training scenario (cluster, model, data, plan) or a collectives scenario.

    Load one with Scenario.load(path) or make one with Scenario.from_dicts(...); change it
    with override(pointer, value), which takes the JSON pointers of sweep files:
    "/cluster/...", "/model/...", "/data/...", "/plan/..." point into those parts (their
    files or inline objects), "/scenario/..." into the scenario file itself ("/scenario/mode",
    "/scenario/steps", or "/scenario/plan" to pick another plan file). A collectives
    scenario takes /scenario and /cluster pointers.

    Files are read again at each run, as the command reads them. An unedited scenario is
    built as `strait simulate FILE` builds it, an edited one as a sweep point with the same
    edits, so errors name the same files and keys.
    """

    __slots__ = ("_handle",)

    def __init__(self, handle):
        if not isinstance(handle, _strait.Scenario):
            raise TypeError("make a Scenario with Scenario.load(path) or Scenario.from_dicts(...)")
        self._handle = handle

    @classmethod
    def load(cls, path):
        """Reads a scenario file (configs/scenarios/*.json) and checks it as `strait simulate`
        does before running it: every file it names is read, every key checked.

        Raises strait.ConfigError for a bad config, strait.Error for a file that cannot be read.
        """
        return cls(_strait.Scenario.load(_os.fspath(path)))

    @classmethod
    def from_dicts(cls, cluster, model=None, data=None, plan=None, **scenario_keys):
        """A scenario from its parts: each a dict (the content of such a file) or the path of
        a file, plus the scenario file's own keys (name, steps, seed, mode, profiles,
        hardware, max_work; for a collectives scenario, collectives and no model, data or plan).

        Relative paths, in the arguments and inside the dicts, are relative to the working
        directory. Errors in a dict name the file "<dicts>".
        """
        document = dict(scenario_keys)
        for key, part in (("cluster", cluster), ("model", model), ("data", data), ("plan", plan)):
            if part is not None:
                document[key] = _os.fspath(part) if isinstance(part, _os.PathLike) else part
        return cls(_strait.Scenario.from_dicts(**document))

    def override(self, pointer, value):
        """Sets `value` (a JSON value: str, number, bool, None, list, dict) at `pointer`, as a
        sweep file's "set" block would, e.g. override("/cluster/cross_dc/0/bandwidth",
        "100 Gb/s"). The pointer's parent must exist (only its last key may be new), else
        strait.ConfigError at (this scenario's file, pointer); the value is checked when the
        scenario runs, by the loader of its key.
        """
        self._handle.override(pointer, value)

    def with_overrides(self, overrides):
        """A copy with every {pointer: value} of `overrides` set in order; self is unchanged."""
        changed = self.copy()
        for pointer, value in dict(overrides).items():
            changed.override(pointer, value)
        return changed

    def to_dict(self):
        """The scenario file's content with its overrides and every part inline (cluster,
        model, data, plan as dicts). Relative paths inside the parts (a data file's
        histogram) are left as written, relative to their own files."""
        return self._handle.to_dict()

    def copy(self):
        """An independent copy (overrides of one leave the other alone)."""
        return Scenario(self._handle.copy())

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    @property
    def file(self):
        """The scenario's file ("<dicts>" for one made from dicts)."""
        return self._handle.file

    @property
    def kind(self):
        """"training" or "collectives"."""
        return self._handle.kind

    @property
    def overrides(self):
        """The overrides made, in order, as (pointer, value) pairs."""
        return self._handle.overrides

    def __repr__(self):
        return repr(self._handle)


def _as_scenario(scenario):
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, (str, _os.PathLike)):
        return Scenario.load(scenario)
    raise TypeError(f"expected a strait.Scenario or a scenario file's path, got {type(scenario).__name__}")


class _Report:
    """A JSON report whose top-level keys read as attributes (result.step_time_ms) and as
    items (result["steps"]: a key that a method's name hides)."""

    __slots__ = ("_report",)

    def __init__(self, report):
        self._report = report

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._report[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no {name!r}; its keys: {', '.join(sorted(self._report))}"
            ) from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._report))

    def __getitem__(self, key):
        return self._report[key]

    def keys(self):
        """The report's keys."""
        return self._report.keys()

    def to_dict(self):
        """The report as `strait simulate --json` writes it (a copy)."""
        return _copy.deepcopy(self._report)

    def __eq__(self, other):
        return type(self) is type(other) and self._report == other._report

    __hash__ = None


class Result(_Report):
    """The result of a training scenario: the keys of `strait simulate --json` as attributes
    (step_time_ms, step_time_p50_ms, step_time_p99_ms, step_times_ms, steady_state,
    samples_per_sec, mfu, breakdown_ms, breakdown_critical_ms, top_stragglers,
    peak_memory_gib, memory_terms_gib, memory_fits, traffic_bytes,
    traffic_bytes_by_comm_class, ...; cli/README.md lists them), and tables of them as pandas
    DataFrames. The key "steps" (the number of steps) reads as result["steps"]: the method
    steps() is the table of steps."""

    __slots__ = ()

    def steps(self):
        """One row per simulated step: step, time_ms, phase ("warmup", "steady" or "drain")
        and counted (whether step_time_ms, the mean, covers it: the steady steps, or every
        step when the run has none)."""
        pandas = _pandas("Result.steps()")
        state = self._report["steady_state"]
        times = self._report["step_times_ms"]
        n, warmup, drain = len(times), state["warmup_steps"], state["drain_steps"]
        phases = ["warmup" if i < warmup else "drain" if i >= n - drain else "steady" for i in range(n)]
        counted = [p == "steady" or not state["steady"] for p in phases]
        return pandas.DataFrame(
            {"step": range(n), "time_ms": times, "phase": phases, "counted": counted}
        ).set_index("step")

    def breakdown(self):
        """Where a step goes, per step in ms: one row per term (compute, exposed_<purpose>,
        straggler_wait, bubble), columns average (the average rank) and critical (the
        critical rank). Each column adds up to the mean over all steps."""
        pandas = _pandas("Result.breakdown()")
        frame = pandas.DataFrame(
            {
                "average_ms": self._report["breakdown_ms"],
                "critical_ms": self._report["breakdown_critical_ms"],
            }
        )
        frame.index.name = "term"
        return frame

    def memory(self):
        """Memory of the GPU with the highest peak (peak_memory_rank), GiB per term."""
        pandas = _pandas("Result.memory()")
        frame = pandas.DataFrame({"gib": self._report["memory_terms_gib"]})
        frame.index.name = "term"
        return frame

    def traffic(self):
        """Bytes over each link class (nvlink, pcie, scale_out, cross_dc) during the run:
        one row per communication purpose that moved any, then "all"."""
        pandas = _pandas("Result.traffic()")
        rows = dict(self._report["traffic_bytes_by_comm_class"])
        rows["all"] = self._report["traffic_bytes"]
        frame = pandas.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "purpose"
        return frame

    def __repr__(self):
        r = self._report
        return (
            f"<strait.Result {r['scenario']!r}: {r['step_time_ms']:.4g} ms per step, "
            f"MFU {r['mfu']:.1%}, {r['gpus']} GPUs, {r['mode']} mode>"
        )


class CollectiveResult(_Report):
    """The result of a collectives scenario: the keys of `strait simulate --json` as
    attributes (makespan_ms, traffic_bytes, gpus, mode, ...); the list "collectives" reads
    as result["collectives"], the method collectives() is its table."""

    __slots__ = ()

    def collectives(self):
        """One row per collective: op, algorithm, ranks, bytes, start_us, end_us, time_us."""
        pandas = _pandas("CollectiveResult.collectives()")
        return pandas.DataFrame(self._report["collectives"]).set_index("name")

    def traffic(self):
        """Bytes over each link class (one row, "all")."""
        pandas = _pandas("CollectiveResult.traffic()")
        frame = pandas.DataFrame.from_dict({"all": self._report["traffic_bytes"]}, orient="index")
        frame.index.name = "purpose"
        return frame

    def __repr__(self):
        r = self._report
        return (
            f"<strait.CollectiveResult {r['scenario']!r}: {len(r['collectives'])} collectives "
            f"in {r['makespan_ms']:.4g} ms, {r['gpus']} GPUs, {r['mode']} mode>"
        )


def simulate(scenario, mode=None, steps=None, profiles=None):
    """Simulates a scenario (a Scenario or a scenario file's path), as `strait simulate
    SCENARIO --json` does: a Result for a training scenario, a CollectiveResult for a
    collectives one.

    mode: "flow" or "analytical" instead of the scenario's; steps: steps to simulate instead
    of the scenario's (training only; set as "/scenario/steps" is); profiles: the calibration
    profiles folder for a scenario that names none (default: default_profiles_dir).
    The GIL is released while it runs.
    """
    scenario = _as_scenario(scenario)
    report = _strait.simulate(scenario._handle, mode=mode, steps=steps, profiles=_optional_path(profiles))
    return CollectiveResult(report) if scenario.kind == "collectives" else Result(report)


class PlanResult(_Report):
    """What `strait plan` finds: found (bool), report (the --json report), and for the best
    plan plan (the plan file, --out), torchrec (the TorchRec sharding plan, --torchrec) and
    launch (the launch plan, --launch; its job's files relative to the working directory);
    those three are None when no plan was found."""

    __slots__ = ()

    def __repr__(self):
        return f"<strait.PlanResult found={self._report['found']}>"


def plan(
    scenario,
    *,
    evaluations=48,
    budget=600.0,
    top=5,
    threads=1,
    mode=None,
    profiles=None,
    constraints=None,
    entrypoint=None,
    torchrec_module=None,
    torchrec_sequence_module=None,
    program=None,
):
    """Searches the fastest plan for a training scenario that fits, as `strait plan SCENARIO`
    does (the scenario's plan is the baseline to beat), and returns a PlanResult.

    evaluations: final-mode simulations the search may take (its effort: the same plan on any
    machine); budget: a wall-clock upper bound in seconds; top: plans in the report; threads:
    worker threads (never change the result); mode: the final stage's network mode; profiles:
    as for simulate(); constraints: a constraints file (planner/README.md); entrypoint: what
    the launch plan's lines run, "SCRIPT ARGS", "-m MODULE ARGS" or "python -m MODULE ARGS"
    (default: the placeholder "train.py --plan plan.json --launch launch.json"; program= is
    its deprecated name); torchrec_module, torchrec_sequence_module: as the command's options
    of those names. The GIL is released while it runs.
    """
    if program is not None:
        if entrypoint is not None:
            raise TypeError("plan() takes entrypoint= or program= (its deprecated name), not both")
        _warnings.warn("plan(program=...) is deprecated; use entrypoint=", DeprecationWarning, stacklevel=2)
        entrypoint = program
    options = {}
    for key, value in (
        ("entrypoint", entrypoint),
        ("torchrec_module", torchrec_module),
        ("torchrec_sequence_module", torchrec_sequence_module),
    ):
        if value is not None:
            options[key] = value
    found = _strait.plan(
        _as_scenario(scenario)._handle,
        evaluations=evaluations,
        budget=float(budget),
        top=top,
        threads=threads,
        mode=mode,
        profiles=_optional_path(profiles),
        constraints=_optional_path(constraints),
        **options,
    )
    return PlanResult(found)


class SweepResult:
    """A sweep's outputs: csv (the text `strait sweep` writes to its CSV), rows (its JSON
    Lines: one dict per point with "point", "axes" and "result" or "error"), frame() (the CSV
    as a pandas DataFrame), name, points and failed."""

    __slots__ = ("name", "csv", "rows", "points", "failed")

    def __init__(self, name, csv, rows, points, failed):
        self.name, self.csv, self.rows, self.points, self.failed = name, csv, rows, points, failed

    def frame(self):
        """The CSV as a pandas DataFrame (pandas.read_csv of the same text)."""
        import io

        return _pandas("SweepResult.frame()").read_csv(io.StringIO(self.csv))

    def __repr__(self):
        return f"<strait.SweepResult {self.name!r}: {self.points} points, {self.failed} failed>"


def sweep(path, *, threads=0, profiles=None):
    """Runs every point of a sweep file (configs/sweeps/*.json), as `strait sweep` does, on
    `threads` threads (0: all cores), and returns a SweepResult: the same CSV and JSON Lines
    (rows in point order; only the wall-clock columns differ from run to run). A bad sweep
    file raises strait.ConfigError before any point runs; a failing point is a row with its
    error. The GIL is released while it runs.
    """
    with _tempfile.TemporaryDirectory(prefix="strait-sweep-") as folder:
        csv_path = _os.path.join(folder, "sweep.csv")
        jsonl_path = _os.path.join(folder, "sweep.jsonl")
        summary = _strait.sweep(
            _os.fspath(path), csv_path, jsonl_path, threads=threads, profiles=_optional_path(profiles)
        )
        with open(csv_path, encoding="utf-8") as f:
            csv = f.read()
        with open(jsonl_path, encoding="utf-8") as f:
            rows = [_json.loads(line) for line in f if line.strip()]
    return SweepResult(summary["name"], csv, rows, summary["points"], summary["failed"])
