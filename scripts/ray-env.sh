#!/usr/bin/env bash
# Creates (once) the Python virtual environment the Ray driver runs in, build/ray-venv, with Ray at
# the pinned version, and prints its python. Re-running it reuses a venv that already has that Ray.
#   scripts/ray-env.sh            # -> /path/to/build/ray-venv/bin/python
# VMAF_RS_RAY_VENV overrides the venv's directory; PYTHON the interpreter that creates it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Ray's release this project's driver and tests were written and run against.
RAY_VERSION=2.60.0
venv="${VMAF_RS_RAY_VENV:-$root/build/ray-venv}"
py="${PYTHON:-python3}"
if [ -x "$venv/bin/python" ] &&
    [ "$("$venv/bin/python" -c 'import ray; print(ray.__version__)' 2>/dev/null)" = "$RAY_VERSION" ]; then
    echo "$venv/bin/python"
    exit 0
fi
command -v "$py" >/dev/null || { echo "ray-env: $py not found; install Python 3.10-3.13 (scripts/deps.sh)" >&2; exit 1; }
mkdir -p "$(dirname "$venv")"
"$py" -m venv "$venv" >&2 || {
    echo "ray-env: cannot create a venv with $py; install python3-venv (scripts/deps.sh)" >&2
    exit 1
}
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
# ray[default]: the core plus the dashboard-less cluster pieces `ray start` needs.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "ray[default]==$RAY_VERSION" >&2
"$venv/bin/python" -c 'import ray; print("ray-env: ray", ray.__version__, file=__import__("sys").stderr)'
echo "$venv/bin/python"
