#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, then checks the installation as a user
# would: a consumer project built with find_package(strait) (tests/install/consumer)
# gives the same step time as the installed strait; the installed strait finds its
# profiles and strait-mpi relative to itself; the installed Python module imports and
# simulates. Usage: consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/strait-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
for path in bin/strait libexec/strait/strait-mpi lib/cmake/strait/strait-config.cmake \
            include/strait/sim/run/training_run.hpp share/strait/configs/profiles/h100-sxm.json; do
  [ -e "$prefix/$path" ] || { echo "not installed: $path" >&2; exit 1; }
done

# Everything below runs away from the checkout, so nothing can be found through it.
cd "$work"
scenario=$prefix/share/strait/configs/scenarios/dlrm-8gpu.json
"$prefix/bin/strait" simulate "$scenario" --json "$work/cli.json" >/dev/null
cli=$(python3 -c "import json,sys; print(repr(json.load(open(sys.argv[1]))['step_time_ms']))" \
      "$work/cli.json")

cmake -S "$source/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" -j 2 >/dev/null
consumer=$("$work/consumer/step_time" "$scenario")
python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); \
sys.exit(0 if a == b else f'consumer {a} ms, installed strait {b} ms')" "$consumer" "$cli"

# strait hands exec to the installed strait-mpi (libexec/strait).
"$prefix/bin/strait" exec --help | grep -q "^usage: strait exec"

if [ -e "$build/python/strait/__init__.py" ]; then
  PYTHONPATH=$prefix/lib/python3/dist-packages /usr/bin/python3 - "$prefix" "$scenario" "$cli" <<'PY'
import os, sys
import strait
prefix, scenario, cli = sys.argv[1], sys.argv[2], float(sys.argv[3])
assert strait.__file__.startswith(prefix), strait.__file__
assert os.path.realpath(strait.default_profiles_dir) == \
    os.path.realpath(os.path.join(prefix, "share/strait/configs/profiles")), strait.default_profiles_dir
got = strait.simulate(strait.Scenario.load(scenario)).step_time_ms
assert got == cli, (got, cli)
PY
fi
echo "installed into a fresh prefix: consumer, CLI and Python agree: $cli ms"
