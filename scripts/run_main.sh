#!/usr/bin/env bash
# The main job: installs the runtime dependencies, builds sw_net, and runs VGG-19 end to end on
# the emulated SW26010 core group on the bundled sample image (top-5 and the per-layer table).
# Extra arguments go to sw_net (e.g. --net alexnet, --schedule baseline, --batch 2).
# Needs neither GoogleTest nor Python: the configure step turns the tests off
# (-DBUILD_TESTING=OFF; scripts/run_tests.sh turns them on again in the same build/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh -DBUILD_TESTING=OFF --target sw_net
./build/apps/sw_net --net vgg19 "$@"
