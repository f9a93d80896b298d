#!/usr/bin/env bash
# Installs dependencies, builds everything, runs every test with CTest, then the sanitizer job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh --tests
scripts/build.sh -DBUILD_TESTING=ON
ctest --test-dir build --output-on-failure -j"$(nproc)"
# The installed package used from another project (examples/user_layer), as a user would.
scripts/check_example.sh build
# ASan + UBSan over the passes, the generator, the emulator and a subset of the tests, and
# TSan over the emulator tests, in build-asan/ and build-tsan/ (docs/testing.md, "Sanitizers").
scripts/run_sanitizers.sh
