#!/usr/bin/env bash
#===- scripts/setup.sh - Install fp4train's build dependencies -----------===#
#
# Installs every Debian package the build and the tests need, then the
# framework front ends' virtual environment (.venv: pinned torch, torch-mlir,
# torchao, jax and IREE's compiler from PyPI,
# python/requirements-frontends.txt). Idempotent: it asks dpkg
# what is already present and only touches apt when something is missing, and
# rebuilds .venv only when the pinned requirements changed, so a second run
# is a no-op that takes well under a second.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

PACKAGES=(
  # Toolchain and the MLIR 22 SDK (headers, CMake config, mlir-opt, FileCheck, lit).
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  cmake ninja-build ccache python3
  # Tests and benchmarks.
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev pkg-config
  # Philox4x32-10 reference implementation for stochastic rounding [SR1].
  librandom123-dev
  # Sharded steps run on MPI (docs/sharding.md): MPICH, whose ABI is the one
  # MLIR 22's MPI lowering targets by default.
  mpich libmpich-dev
  # The Python package (pybind11 extension over the C API) and its tests;
  # always run with /usr/bin/python3, whatever python3 comes first on PATH.
  pybind11-dev python3-dev python3-numpy python3-pytest
  # The front end's virtual environment is made by Debian's python3.
  python3-venv
  # ASan/UBSan runtimes of clang-22 for `make test-sanitize`.
  libclang-rt-22-dev
  # The style check of `make test` (scripts/format.sh, .clang-format).
  clang-format-22
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}"
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    SUDO=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The front ends' environment: made from /usr/bin/python3 (the interpreter
# the fp4train extension is built for), filled with pip from the pinned
# list; a copy of the list inside marks it complete.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${FP4TRAIN_VENV:-$ROOT/.venv}
REQUIREMENTS=$ROOT/python/requirements-frontends.txt
if ! cmp -s "$REQUIREMENTS" "$VENV/requirements-frontends.txt"; then
  echo "setup: installing the front ends (torch, jax) into $VENV (pip, pinned)"
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check \
      --no-input -r "$REQUIREMENTS"
  cp "$REQUIREMENTS" "$VENV/requirements-frontends.txt"
fi
