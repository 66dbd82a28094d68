#!/usr/bin/env bash
# The main job: set up, compile the sample MLP and run it on the CPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/dev/setup.sh
mkdir -p build/samples
echo "+ compile-module build/samples/models/mlp.mlir -o build/samples/mlp.smod"
build/bin/compile-module build/samples/models/mlp.mlir -o build/samples/mlp.smod
# classify returns the ten class scores and the index of the largest: the class.
echo "+ run-module --module=build/samples/mlp.smod --function=classify --device=cpu-task --input=1x784xf32=0.5"
build/bin/run-module --module=build/samples/mlp.smod --function=classify --device=cpu-task \
  --input=1x784xf32=0.5
