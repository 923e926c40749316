#!/usr/bin/env bash
# Installs NVIDIA's CUDA 13.0 compiler (nvcc, NVVM, CRT headers, runtime headers) from pip into
# build/cuda-venv, so `cargo build --features cuda` works on a machine without a GPU or a system
# CUDA toolkit. 13.0 matches the GPU machine's driver (580, CUDA 13.0): its PTX is accepted there.
# Prints the nvcc path. Idempotent. build.rs finds this nvcc automatically (or set NVCC=...).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/build/cuda-venv"
py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 \
    nvidia-cuda-runtime==13.0.96
nvcc="$(ls "$venv"/lib/python3*/site-packages/nvidia/cu13/bin/nvcc 2>/dev/null | head -n1)"
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
    echo "cuda-toolchain: nvcc not found in $venv after install" >&2
    exit 1
fi
"$nvcc" --version | tail -n 2 >&2
echo "$nvcc"
