#!/usr/bin/env bash
# Installs what the project needs from Debian's packages (run as root, or with sudo).
# Skips apt entirely when everything is already installed.
set -euo pipefail
packages=(cmake make g++ gcc libhalide14-0-dev libpng-dev libgtest-dev libonnx-testdata libonnx-dev libprotobuf-dev libcli11-dev)
# JSON reports and traces (runtime/net/report.cpp); the report plots (scripts/plot_report.py).
packages+=(nlohmann-json3-dev python3-matplotlib)
# MPI: sw_net runs one rank per core group under mpirun (dist/; CMake option SW_MPI).
packages+=(libopenmpi-dev openmpi-bin)
# Only for the model tests (sw_graph_models_test, label "models"): scripts/export_torchvision.py
# builds torchvision's models with seeded weights and exports them to ONNX with PyTorch's output.
packages+=(python3-torch python3-torchvision)
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
