#!/usr/bin/env bash
# Installs what the project needs from Debian's packages (run as root, or with sudo).
# Skips apt entirely when everything is already installed.
#
#   scripts/install_deps.sh           the runtime set: build and run sw_net, the generators, the
#                                     autoscheduler, the emulator, sw_net --model and --export
#                                     (scripts/run_main.sh; no GoogleTest, no Python)
#   scripts/install_deps.sh --tests   the runtime set and the test set (scripts/run_tests.sh)
#
# The two sets are listed in docs/user-guide.md ("Install and build").
set -euo pipefail

with_tests=0
for arg in "$@"; do
    case "$arg" in
        --tests) with_tests=1 ;;
        -h | --help)
            sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "error: unknown argument '$arg' (scripts/install_deps.sh [--tests])" >&2
            exit 1
            ;;
    esac
done

# ---- The runtime set (the main job: configure with -DBUILD_TESTING=OFF, build sw_net, run it).
# Compilers and build tools; gcc also compiles the generated layers of sw_net --model at run
# time (jit/) and make builds an exported folder (`make emu`).
packages=(cmake make g++ gcc)
# Halide 14 (the frontend and its lowering), libpng (images), CLI11 (every tool's options).
packages+=(libhalide14-0-dev libpng-dev libcli11-dev)
# JSON reports and traces (sw_net --report / --trace).
packages+=(nlohmann-json3-dev)
# ONNX import (graph/: sw_net --model, sw_graph_inspect): the ONNX protobuf classes.
packages+=(libonnx-dev libprotobuf-dev)
# MPI: sw_net runs one rank per core group under mpirun (dist/; CMake option SW_MPI, on where
# Open MPI is found). openmpi-bin brings mpirun.
packages+=(libopenmpi-dev openmpi-bin)

# ---- The test set (scripts/run_tests.sh: configure with -DBUILD_TESTING=ON, CTest, the example
# project, the sanitizer job).
if [ "$with_tests" -eq 1 ]; then
    # GoogleTest (every test executable); the ONNX conformance data (onnx_node_test,
    # sw_graph_test's shape reference, sw_graph_exec_test).
    packages+=(libgtest-dev libonnx-testdata)
    # The plot_report test (scripts/plot_report.py, run by /usr/bin/python3).
    packages+=(python3-matplotlib)
    # The model tests (sw_graph_models_test, CTest label "models"): scripts/export_torchvision.py
    # builds torchvision's models with seeded weights and exports them to ONNX with PyTorch's
    # output (about 1 GB with their dependencies).
    packages+=(python3-numpy python3-torch python3-torchvision)
    # The tree checks (CTest label "tree"): scripts/check_layering.py (python3) and
    # scripts/check_format.sh, which pins Debian's clang-format-14.
    packages+=(python3 clang-format-14)
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
