#!/usr/bin/env bash
# Configures and builds the project in build/ (Release). Arguments of the form -DNAME=VALUE go
# to the configure step (e.g. -DBUILD_TESTING=OFF: no tests, no GoogleTest needed); every
# other argument goes to `cmake --build` (e.g. --target sw_net).
set -euo pipefail
cd "$(dirname "$0")/.."
configure=()
build=()
for arg in "$@"; do
    case "$arg" in
        -D*) configure+=("$arg") ;;
        *) build+=("$arg") ;;
    esac
done
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${configure[@]+"${configure[@]}"} > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j"$(nproc)" ${build[@]+"${build[@]}"}
