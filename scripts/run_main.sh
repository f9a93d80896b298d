#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs the demo on bundled defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh --target conv2d_demo
./build/apps/conv2d_demo
