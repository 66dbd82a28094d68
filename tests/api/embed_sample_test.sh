#!/usr/bin/env bash
# Installs the project into a fresh prefix, builds samples/embed out of tree
# against it twice (find_package(Strata), then pkg-config with a bare cc),
# compiles the sample MLP and checks that the embedding's scores are what
# run-module computes for the same input, on both CPU drivers.
# usage: embed_sample_test.sh SOURCE_DIR BUILD_DIR WORK_DIR C_COMPILER MLP_MLIR
set -euo pipefail
src=$1 build=$2 work=$3 cc=$4 mlir=$5
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
pc=$(find "$prefix" -name strata.pc)
libdir=$(dirname "$(dirname "$pc")")
for file in "$prefix/include/strata/strata.h" "$libdir/libstrata.so" "$libdir/cmake/Strata/StrataConfig.cmake" "$pc"; do
  [ -e "$file" ] || { echo "FAIL: cmake --install did not install $file"; cat "$work/install.log"; exit 1; }
done

cmake -G Ninja -S "$src/samples/embed" -B "$work/sample" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/sample"
have_pkg_config=$(command -v pkg-config || true)
if [ -n "$have_pkg_config" ]; then
  # shellcheck disable=SC2046
  "$cc" -std=c11 -Wall -Wextra -o "$work/classify-pc" "$src/samples/embed/main.c" \
    $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs strata)
else
  echo "pkg-config not found (apt-get install pkgconf): the pkg-config build is not checked"
fi

"$build/bin/compile-module" "$mlir" -o "$work/mlp.smod"
# One image, the same pattern main.c uses without a file, as raw float32.
/usr/bin/python3 -c "
import struct, sys
open(sys.argv[1], 'wb').write(struct.pack('<784f', *[((i * 37) % 256) / 255.0 for i in range(784)]))
" "$work/image.raw"

check() {  # check NAME COMMAND...: runs an embedding, checks its class and scores
  local name=$1; shift
  "$@" > "$work/$name.txt"
  cat "$work/$name.txt"
  local scores class best
  scores=$(sed -n 's/^scores: //p' "$work/$name.txt")
  class=$(sed -n 's/^class: //p' "$work/$name.txt")
  best=$(echo "$scores" | awk '{ b = 1; for (i = 2; i <= NF; ++i) if ($i > $b) b = i; print b - 1 }')
  [ -n "$scores" ] && [ "$class" = "$best" ] || { echo "FAIL: $name: class '$class', the best score is $best"; exit 1; }
  "$build/bin/run-module" --module="$work/mlp.smod" --function=predict --device=cpu-sync \
    --input=1x784xf32=@"$work/image.raw" --expected-output="1x10xf32=$scores" | tail -1
}
check cmake-cpu-sync "$work/sample/classify" "$work/mlp.smod" "$work/image.raw"
check cmake-pattern "$work/sample/classify" "$work/mlp.smod"
if "$build/bin/run-module" --list-devices | grep -q '^cpu-task'; then
  check cmake-cpu-task "$work/sample/classify" "$work/mlp.smod" "$work/image.raw" cpu-task threads=2
fi
if [ -n "$have_pkg_config" ]; then
  check pkg-config env LD_LIBRARY_PATH="$libdir" "$work/classify-pc" "$work/mlp.smod" "$work/image.raw"
fi
echo "embed sample OK"
