#!/usr/bin/env bash
# The example project examples/user_layer built as a user would: installs the package from
# build/ (or $1) to a temporary prefix, then configures, builds and tests the example from a
# separate build directory against that prefix only (find_package(HalideSunway)).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
tmp="$(mktemp -d /tmp/halide_sunway_example.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
cmake -S examples/user_layer -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    > "$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/build" -j"$(nproc)"
ctest --test-dir "$tmp/build" --output-on-failure
