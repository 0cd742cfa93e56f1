# Type stubs of the strait package (python/strait/__init__.py has the docstrings).

import os
from typing import Any, Iterable, KeysView, Literal, Mapping, Optional, Union

import pandas

from . import torchrec as torchrec

Json = Union[None, bool, int, float, str, list[Any], dict[str, Any]]
PathLike = Union[str, os.PathLike[str]]
Mode = Literal["flow", "analytical"]

default_profiles_dir: str

class Error(Exception):
    """Any of strait's errors; its text is what `strait` prints after "strait: error: "."""

class ConfigError(Error):
    """A config file's error: "FILE: POINTER: EXPECTATION"."""

    file: str
    pointer: str
    expectation: str

class Scenario:
    @classmethod
    def load(cls, path: PathLike) -> Scenario: ...
    @classmethod
    def from_dicts(
        cls,
        cluster: Union[dict[str, Any], PathLike],
        model: Union[dict[str, Any], PathLike, None] = ...,
        data: Union[dict[str, Any], PathLike, None] = ...,
        plan: Union[dict[str, Any], PathLike, None] = ...,
        **scenario_keys: Json,
    ) -> Scenario: ...
    def override(self, pointer: str, value: Json) -> None: ...
    def with_overrides(self, overrides: Mapping[str, Json]) -> Scenario: ...
    def to_dict(self) -> dict[str, Any]: ...
    def copy(self) -> Scenario: ...
    def __copy__(self) -> Scenario: ...
    def __deepcopy__(self, memo: Any) -> Scenario: ...
    @property
    def file(self) -> str: ...
    @property
    def kind(self) -> Literal["training", "collectives"]: ...
    @property
    def overrides(self) -> list[tuple[str, Json]]: ...

class _Report:
    def __getattr__(self, name: str) -> Any: ...
    def __getitem__(self, key: str) -> Any: ...
    def keys(self) -> KeysView[str]: ...
    def to_dict(self) -> dict[str, Any]: ...

class Result(_Report):
    scenario: str
    cluster: str
    gpus: int
    mode: Mode
    step_time_ms: float
    step_time_p50_ms: float
    step_time_p99_ms: float
    step_times_ms: list[float]
    steady_state: dict[str, Any]
    samples_per_sec: float
    mfu: float
    critical_rank: int
    breakdown_ms: dict[str, float]
    breakdown_critical_ms: dict[str, float]
    top_stragglers: list[dict[str, Any]]
    peak_memory_gib: float
    peak_memory_rank: int
    memory_capacity_gib: float
    memory_fits: bool
    memory_terms_gib: dict[str, float]
    traffic_bytes: dict[str, float]
    traffic_bytes_by_comm_class: dict[str, dict[str, float]]
    kernel_implementations: dict[str, dict[str, str]]
    ops: int
    events: int
    build_wall_s: float
    sim_wall_s: float
    def steps(self) -> pandas.DataFrame: ...  # the step count is result["steps"]
    def breakdown(self) -> pandas.DataFrame: ...
    def memory(self) -> pandas.DataFrame: ...
    def traffic(self) -> pandas.DataFrame: ...

class CollectiveResult(_Report):
    scenario: str
    cluster: str
    gpus: int
    mode: Mode
    makespan_ms: float
    traffic_bytes: dict[str, float]
    events: int
    sim_wall_s: float
    def collectives(self) -> pandas.DataFrame: ...  # the list is result["collectives"]
    def traffic(self) -> pandas.DataFrame: ...

class PlanResult(_Report):
    found: bool
    report: dict[str, Any]
    plan: Optional[dict[str, Any]]
    torchrec: Optional[dict[str, Any]]
    launch: Optional[dict[str, Any]]

class SweepResult:
    name: str
    csv: str
    rows: list[dict[str, Any]]
    points: int
    failed: int
    def frame(self) -> pandas.DataFrame: ...

def simulate(
    scenario: Union[Scenario, PathLike],
    mode: Optional[Mode] = ...,
    steps: Optional[int] = ...,
    profiles: Optional[PathLike] = ...,
) -> Union[Result, CollectiveResult]: ...
def plan(
    scenario: Union[Scenario, PathLike],
    *,
    evaluations: int = ...,
    budget: float = ...,
    top: int = ...,
    threads: int = ...,
    mode: Optional[Mode] = ...,
    profiles: Optional[PathLike] = ...,
    constraints: Optional[PathLike] = ...,
    entrypoint: Optional[str] = ...,
    torchrec_module: Optional[str] = ...,
    torchrec_sequence_module: Optional[str] = ...,
    program: Optional[str] = ...,  # deprecated: entrypoint
) -> PlanResult: ...
def sweep(path: PathLike, *, threads: int = ..., profiles: Optional[PathLike] = ...) -> SweepResult: ...
