#!/usr/bin/env bash
# The main job: set up, compile a sample program and run it on the VM.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/dev/setup.sh
mkdir -p build/samples
build/bin/compile-module samples/vm/loop.mlir -o build/samples/loop.smod
echo "+ run-module --module=build/samples/loop.smod --function=loop --input=i64=100"
build/bin/run-module --module=build/samples/loop.smod --function=loop --input=i64=100
