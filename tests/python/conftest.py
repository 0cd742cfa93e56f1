"""Shared helpers of the Python module's tests (python/README.md).

ctest runs them from the repository root with the build tree's package on PYTHONPATH and the
strait binary in STRAIT_CLI, so each test compares the module with the command on the same
input. Run by hand: PYTHONPATH=build/python STRAIT_CLI=build/bin/strait python3 -m pytest
tests/python (from the repository root).
"""

import json
import os
import shutil
import subprocess

import pytest

try:
    import strait  # noqa: F401
except ImportError:
    if os.environ.get("STRAIT_CLI"):
        raise  # under ctest the module was built: an import error is a failure
    pytest.skip("the strait module is not on PYTHONPATH (build/python)", allow_module_level=True)

# Keys whose values are wall-clock times: the only ones that differ between two runs.
WALL_KEYS = {"build_wall_s", "sim_wall_s", "wall_s", "plan_wall_s"}


def without_wall_times(value):
    """`value` (a report) without its wall-clock keys, at any depth."""
    if isinstance(value, dict):
        return {k: without_wall_times(v) for k, v in value.items() if k not in WALL_KEYS}
    if isinstance(value, list):
        return [without_wall_times(v) for v in value]
    return value


class Cli:
    """The strait binary: run(args) in a folder, the result parsed."""

    def __init__(self, path):
        self.path = os.path.abspath(path)

    def run(self, *args, cwd=None):
        return subprocess.run(
            [self.path, *args], cwd=cwd, capture_output=True, text=True, timeout=600
        )

    def json(self, *args, cwd=None):
        """`strait ARGS --json -` as a dict; fails the test on a non-zero exit."""
        done = self.run(*args, "--json", "-", cwd=cwd)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def error(self, *args, cwd=None):
        """The message `strait ARGS` fails with, less its "strait: error: " prefix."""
        done = self.run(*args, cwd=cwd)
        assert done.returncode == 1, (done.returncode, done.stderr)
        prefix = "strait: error: "
        assert prefix in done.stderr, done.stderr
        return done.stderr[done.stderr.index(prefix) + len(prefix):].rstrip("\n")


@pytest.fixture(scope="session")
def cli():
    return Cli(os.environ.get("STRAIT_CLI", "build/bin/strait"))


@pytest.fixture
def configs_copy(tmp_path):
    """A copy of configs/ in a scratch folder: the command runs there on an edited file with
    the same relative paths the module reads from the repository, so messages compare
    word for word."""
    shutil.copytree("configs", tmp_path / "configs")
    return tmp_path


def edit_json(path, pointer, value):
    """Sets `value` at a JSON pointer of the file `path` (a key of objects and arrays)."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    keys = [k.replace("~1", "/").replace("~0", "~") for k in pointer.split("/")[1:]]
    node = doc
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    node[int(keys[-1]) if isinstance(node, list) else keys[-1]] = value
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
