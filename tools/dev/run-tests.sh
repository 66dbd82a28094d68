#!/usr/bin/env bash
# Sets up, builds, makes the Python environment of the real-model tests
# (build/venv), and runs the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/dev/setup.sh
bash tools/dev/setup-python.sh
cd build
ctest --output-on-failure -j"$(nproc)"
