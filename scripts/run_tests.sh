#!/usr/bin/env bash
# Installs dependencies, builds everything, and runs every test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
