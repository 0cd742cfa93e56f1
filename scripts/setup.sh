#!/usr/bin/env bash
# Installs the Debian packages strait needs, when they are missing.
# Idempotent: prints nothing and does nothing when all are present.
# As root it installs them with apt-get; otherwise it names them and fails.
set -euo pipefail

packages=(
  cmake make g++ ccache pkg-config libgoogle-perftools-dev
  libboost-graph-dev libboost-program-options-dev
  nlohmann-json3-dev libeigen3-dev libfmt-dev libtbb-dev
  libgtest-dev libgmock-dev
  libopenmpi-dev openmpi-bin
  jupyter-nbconvert python3-nbformat python3-nbclient python3-ipykernel
  python3-pandas python3-matplotlib
  pybind11-dev python3-pytest python3-dev
  time
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "strait: missing Debian packages: ${missing[*]}" >&2
  echo "strait: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "strait: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
