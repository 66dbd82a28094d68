#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/dev/setup.sh
cd build
ctest --output-on-failure -j"$(nproc)"
