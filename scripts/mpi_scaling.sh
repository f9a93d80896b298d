#!/usr/bin/env bash
# Data-parallel scaling of the built-in networks over 1, 2 and 4 emulated core groups (one MPI
# rank each, run here with mpirun --oversubscribe), then a projection to 1-1024 nodes from the
# same job model (dist/JobModel.h, build/dist/mpi_projection), and batch-1 VGG-19's latency
# with its FC layers split over 4 core groups (--fc-split) against one. Prints per run the
# job line of sw_net (modelled time, images/s, scaling efficiency) and ends with
#   RESULT alexnet_speedup_4cg=<x> vgg19_speedup_4cg=<x> alexnet_efficiency_4cg=<x>
#          vgg19_efficiency_4cg=<x> vgg19_b1_fc_split_4cg_latency_reduction=<fraction>
# Usage: scripts/mpi_scaling.sh [BUILD_DIR]   (default build; needs SW_MPI=ON)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
sw_net="$build/apps/sw_net"
projection="$build/dist/mpi_projection"
for f in "$sw_net" "$projection"; do
    [ -x "$f" ] || { echo "error: $f not built (cmake --build $build; SW_MPI=ON needs libopenmpi-dev)" >&2; exit 1; }
done
command -v mpirun > /dev/null || { echo "error: mpirun not found (apt-get install openmpi-bin)" >&2; exit 1; }
mpi=(mpirun --allow-run-as-root --oversubscribe)
declare -A speedup efficiency
for net in alexnet vgg19; do
    batch=8
    [ "$net" = vgg19 ] && batch=4
    base=""
    for p in 1 2 4; do
        out=$("${mpi[@]}" -np "$p" "$sw_net" --net "$net" --batch "$batch" --no-compare --top 1)
        job=$(grep '^job: ' <<< "$out") || { echo "error: no job line from $net on $p rank(s)" >&2; exit 1; }
        echo "$net, $p core group(s): ${job#job: }"
        ms=$(sed -E 's/.*image\(s\): modelled ([0-9.]+) ms.*/\1/' <<< "$job")
        eff=$(sed -E 's/.*scaling efficiency ([0-9.]+).*/\1/' <<< "$job")
        if [ "$p" = 1 ]; then
            base=$ms
            per_image=$(awk -v t="$ms" -v n="$batch" 'BEGIN { printf "%.4f", t / n }')
        fi
    done
    # The same images: the speedup is the ratio of the modelled job times.
    speedup[$net]=$(awk -v a="$ms" -v b="$base" 'BEGIN { printf "%.3f", b / a }')
    efficiency[$net]=$eff
    echo "$net: 4 core groups give ${speedup[$net]}x one core group's modelled throughput"
    # Each image's result: its 1000 probabilities (--dump-output), the larger of what sw_net sends.
    "$projection" --per-image-ms "$per_image" --result-bytes 4000 --images-per-rank 1
    echo
done
# Batch-1 VGG-19 latency (autoscheduled): one core group against the FC layers split over 4.
one=$("${mpi[@]}" -np 1 "$sw_net" --net vgg19 --batch 1 --no-compare --top 1 --schedule auto | grep '^job: ')
one_ms=$(sed -E 's/.*image\(s\): modelled ([0-9.]+) ms.*/\1/' <<< "$one")
split=$("${mpi[@]}" -np 4 "$sw_net" --net vgg19 --batch 1 --no-compare --top 1 --schedule auto --fc-split |
        grep '^fc-split over')
split_ms=$(sed -E 's/.*: modelled ([0-9.]+) ms.*/\1/' <<< "$split")
echo "vgg19 batch 1, autoscheduled: one core group $one_ms ms; $split"
reduction=$(awk -v a="$one_ms" -v b="$split_ms" 'BEGIN { printf "%.3f", 1 - b / a }')
echo "RESULT alexnet_speedup_4cg=${speedup[alexnet]} vgg19_speedup_4cg=${speedup[vgg19]}" \
     "alexnet_efficiency_4cg=${efficiency[alexnet]} vgg19_efficiency_4cg=${efficiency[vgg19]}" \
     "vgg19_b1_fc_split_4cg_latency_reduction=$reduction"
