#!/usr/bin/env bash
# The sanitizer job (docs/testing.md, "Sanitizers"), run by scripts/run_tests.sh after CTest.
#
# 1. AddressSanitizer + UndefinedBehaviorSanitizer (build-asan, -DSW_SANITIZE=ON: every
#    target of this project is built with -fsanitize=address,undefined
#    -fno-sanitize-recover=undefined -fno-omit-frame-pointer; Halide and LLVM are the
#    prebuilt Debian packages and stay uninstrumented):
#    - the ONNX importer's foundation (graph/: sw_graph_test, which also runs
#      sw_graph_inspect on bad and good files) and its executor (sw_graph_exec_test: layers
#      built at run time by the instrumented generator through the persistent layer cache,
#      whole graphs run on the instrumented emulator, the export of a model);
#    - the emulator tests, the pass tests (sunway_lowering_test, and passes_ir_test: each
#      pass on IR built by hand), the DMA-path tests
#      (staging_test) and conv2d_test, whose six layers are generated at build time by the
#      instrumented layers.generator (our passes, PromoteAccumulators on the register-blocked
#      hand schedule included) and run on the instrumented emulator;
#    - the generator itself on layers of every kind (conv2d hand/baseline/autoscheduled,
#      dense, max and average pool, LRN, softmax, ReLU), the autoscheduler plugin included;
#    - file input (io_test: PNG, .npy, output files, the size limits) and NaN through
#      generated layers on the emulator (nan_test).
# 2. ThreadSanitizer (build-tsan, -DSW_SANITIZE=thread): the emulator tests (64 CPE threads
#    per spawn, barriers, reply words; the SW26010-Pro's RMA and reply-word waits) except the
#    death tests, whose children only print and _exit.
# Any sanitizer report fails the job (halt_on_error, -fno-sanitize-recover).
#
# Environment: SW_SANITIZE_JOBS (default: nproc), SW_SANITIZE_SKIP_TSAN=1 to skip step 2.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${SW_SANITIZE_JOBS:-$(nproc)}
start=$(date +%s)
step() { echo "== run_sanitizers.sh [$(($(date +%s) - start)) s]: $*"; }

# Leak checking is off: Halide and LLVM keep process-lifetime globals (the generator
# registry, interned IR such as the small-integer constants, LLVM's option and target
# registries) that are never freed by design and would be reported as leaks at exit.
# Leaks are not what this job looks for; use-after-free, overflows and UB are.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

# ---------------------------------------------------------------- ASan + UBSan
step "configure build-asan (-DSW_SANITIZE=ON)"
mkdir -p build-asan build-tsan
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DSW_SANITIZE=ON > build-asan/sanitize.log 2>&1 ||
    { cat build-asan/sanitize.log; exit 1; }
step "build (passes, generator, autoscheduler plugin, emulator, tests)"
cmake --build build-asan -j"$jobs" --target layers.generator sw_autoschedule emulator_test emulator_pro_test \
    sunway_lowering_test passes_ir_test staging_test conv2d_test sw_graph_test sw_graph_inspect sw_graph_exec_test io_test nan_test \
    dist_test >> build-asan/sanitize.log 2>&1 ||
    { tail -n 60 build-asan/sanitize.log; exit 1; }

step "ctest: emulator, passes, DMA paths, conv2d, ONNX importer, file input, NaN in generated code"
ctest --test-dir build-asan --output-on-failure -j"$jobs" \
    -R '^(Emulator|Shapes/StridedDma|SunwayLowering|Directives|DelayDmaWaits|DeferTileGets|PipelineTilePuts|PipelineRoundPuts|PromoteAccumulators|AlignVectorAccesses|DoubleBuffer|MergeBlockPartitions|HoistPaddingFill|WorkCount|Staging|Conv2D|Conv2DErrors|Conv2DSchedule|CpeSource|GeneratorErrors|Shapes/Conv2D|Graph|IoTest|Preprocess|DeterministicWeights|NaN|Executor|ExecutorErrors|Lowering|Dist)'

step "layer generations of every kind under the sanitizers"
gen=build-asan/generators/layers.generator
plugin=$(find build-asan/autoscheduler -name 'libsw_autoschedule.so' | head -n 1)
out=build-asan/sanitizer_layers
mkdir -p "$out"
generate() {
    local name=$1
    shift
    if ! "$@" > "$out/$name.log" 2>&1; then
        echo "FAILED: $name: $*"
        cat "$out/$name.log"
        exit 1
    fi
    echo "  ok: $name"
}
generate conv_hand "$gen" -g conv2d -f conv_hand -o "$out" -e mpe,cpe,h,stmt,report target=sw26010 \
    batch=1 in_channels=16 out_channels=32 height=28 width=28 kernel=3 stride=1 pad=1
generate conv_pro "$gen" -g conv2d -f conv_pro -o "$out" target=sw26010-pro \
    batch=2 in_channels=8 out_channels=24 height=19 width=23 kernel=5 stride=2 pad=2 groups=2
generate conv_baseline "$gen" -g conv2d -f conv_baseline -o "$out" target=sw26010 schedule=baseline \
    batch=1 in_channels=3 out_channels=16 height=35 width=35 kernel=11 stride=4 pad=2
generate conv_auto "$gen" -g conv2d -f conv_auto -o "$out" -e mpe,cpe,h,report,schedule \
    -p "$plugin" -s Sunway auto_schedule=true target=sw26010 \
    batch=1 in_channels=32 out_channels=32 height=14 width=14 kernel=3 stride=1 pad=1
# Blocks in rounds pipelined (PipelineRoundPuts): a stem on the mesh in 2 rounds, a dense
# rfactor plan on the mesh in 4.
generate conv_rounds_auto "$gen" -g conv2d -f conv_rounds_auto -o "$out" -e mpe,cpe,h,schedule \
    -p "$plugin" -s Sunway auto_schedule=true target=sw26010 \
    batch=1 in_channels=3 out_channels=64 height=112 width=112 kernel=7 stride=2 pad=3 relu=true
generate dense_rounds_auto "$gen" -g dense -f dense_rounds_auto -o "$out" -e mpe,cpe,h,schedule \
    -p "$plugin" -s Sunway auto_schedule=true target=sw26010 \
    batch=128 in_features=128 out_features=1024 relu=false
# A mesh plan whose window rows are placed by DMA (sw::place_rows), and a pointwise conv
# whose weights stay in the LDM over its pixel tiles in turn (stationary_input).
generate conv_rows_placed_auto "$gen" -g conv2d -f conv_rows_placed_auto -o "$out" \
    -e mpe,cpe,h,schedule -p "$plugin" -s Sunway auto_schedule=true target=sw26010 \
    batch=1 in_channels=64 out_channels=64 height=56 width=56 kernel=3 stride=1 pad=1 relu=true
generate conv_stationary_auto "$gen" -g conv2d -f conv_stationary_auto -o "$out" \
    -e mpe,cpe,h,schedule -p "$plugin" -s Sunway auto_schedule=true target=sw26010 \
    batch=1 in_channels=128 out_channels=512 height=1 width=784 kernel=1 pad=0 relu=true residual=true
# A zero-padded window whose LDM rows are aligned to whole vectors (aligned_window), on the mesh
# with its rows placed by DMA.
generate conv_aligned_auto "$gen" -g conv2d -f conv_aligned_auto -o "$out" \
    -e mpe,cpe,h,schedule -p "$plugin" -s Sunway auto_schedule=true target=sw26010 \
    batch=2 in_channels=16 out_channels=24 height=27 width=27 kernel=3 stride=1 pad=1 relu=true
generate dense_hand "$gen" -g dense -f dense_hand -o "$out" target=sw26010 \
    batch=2 in_features=300 out_features=100 relu=true
generate dense_baseline "$gen" -g dense -f dense_baseline -o "$out" target=sw26010 schedule=baseline \
    batch=1 in_features=512 out_features=64 relu=false
generate pool_max "$gen" -g pool -f pool_max -o "$out" target=sw26010 \
    batch=1 channels=16 height=27 width=27 kernel=3 stride=2 pad=0 type=max
generate pool_avg "$gen" -g pool -f pool_avg -o "$out" target=sw26010 schedule=baseline \
    batch=2 channels=5 height=9 width=11 kernel=3 stride=2 pad=1 ceil_mode=true type=avg
generate lrn "$gen" -g lrn -f lrn -o "$out" target=sw26010 batch=1 channels=16 height=13 width=13 size=5
generate softmax "$gen" -g softmax -f softmax -o "$out" target=sw26010 batch=2 classes=1000
generate relu "$gen" -g relu -f relu -o "$out" target=sw26010 schedule=baseline size=10007
generate sigmoid "$gen" -g activation -f sigmoid -o "$out" target=sw26010 op=sigmoid size=1001
generate hard_swish "$gen" -g activation -f hard_swish -o "$out" target=sw26010 op=hard_swish \
    alpha=0.16666667 beta=0.5 size=1001
generate conv_hard_swish_auto "$gen" -g conv2d -f conv_hard_swish_auto -o "$out" -p "$plugin" -s Sunway \
    auto_schedule=true target=sw26010 in_channels=24 out_channels=24 height=14 width=14 kernel=3 pad=1 \
    groups=24 relu=false activation=hard_swish alpha=0.16666667 beta=0.5
generate eltwise "$gen" -g eltwise -f eltwise -o "$out" target=sw26010 op=add activation=relu batch=2 \
    channels=5 height=7 width=9 b_height=1 b_width=1
generate channel_affine "$gen" -g channel_affine -f channel_affine -o "$out" target=sw26010 batch=2 \
    channels=7 height=5 width=11 relu=true
generate global_pool "$gen" -g global_pool -f global_pool -o "$out" target=sw26010 batch=2 channels=9 \
    height=13 width=13 type=max
generate concat "$gen" -g concat -f concat -o "$out" target=sw26010 batch=2 height=5 width=6 \
    channels=3,5,2 input.size=3
generate channel_shuffle "$gen" -g channel_shuffle -f channel_shuffle -o "$out" target=sw26010 channels=12 groups=3
generate conv_dilated "$gen" -g conv2d -f conv_dilated -o "$out" target=sw26010 in_channels=5 out_channels=6 \
    height=17 width=15 kernel=3 dilation=2 pad=2
generate concat_auto "$gen" -g concat -f concat_auto -o "$out" -e mpe,cpe,h,schedule -p "$plugin" -s Sunway \
    auto_schedule=true target=sw26010 batch=2 height=5 width=6 channels=3,5,2 input.size=3
generate conv_residual "$gen" -g conv2d -f conv_residual -o "$out" target=sw26010 batch=2 in_channels=6 \
    out_channels=10 height=13 width=17 kernel=3 stride=2 pad=1 residual=true relu=true
generate conv_residual_auto "$gen" -g conv2d -f conv_residual_auto -o "$out" -p "$plugin" -s Sunway \
    auto_schedule=true target=sw26010 in_channels=16 out_channels=16 height=14 width=14 kernel=3 pad=1 \
    residual=true relu=true
# A BatchNorm + ReLU fused into the conv as its prologue: padded (a computing producer staged
# from its own stagings) and unpadded (on floatv4), hand and autoscheduled.
generate conv_prologue "$gen" -g conv2d -f conv_prologue -o "$out" target=sw26010 batch=2 in_channels=13 \
    out_channels=7 height=13 width=11 kernel=3 stride=2 pad=1 prologue=scale_shift_relu
generate conv_prologue_auto "$gen" -g conv2d -f conv_prologue_auto -o "$out" -e mpe,cpe,h,report,schedule \
    -p "$plugin" -s Sunway auto_schedule=true target=sw26010 in_channels=64 out_channels=32 height=1 \
    width=784 kernel=1 pad=0 prologue=scale_shift_relu
# Windows split into stride phases (SplitPhases): an AlexNet conv1-like layer, hand and
# autoscheduled (both split its window).
generate conv_phases "$gen" -g conv2d -f conv_phases -o "$out" target=sw26010 batch=1 in_channels=3 \
    out_channels=24 height=67 width=71 kernel=11 stride=4 pad=0
generate conv_phases_auto "$gen" -g conv2d -f conv_phases_auto -o "$out" -p "$plugin" -s Sunway \
    auto_schedule=true target=sw26010 in_channels=3 out_channels=24 height=67 width=71 kernel=11 stride=4 pad=0
generate dense_regcomm "$gen" -g dense -f dense_regcomm -o "$out" target=sw26010 batch=2 in_features=1001 \
    out_features=201 tile_o=3 tile_n=2 tile_i=77 broadcast=true sharing=regcomm
# The register-communication GEMM: A along the mesh rows, B down the columns, both double
# buffered (slot offsets), an A chunk of 3 x 37 floats (a tail).
generate matmul_regcomm "$gen" -g matmul -f matmul_regcomm -o "$out" target=sw26010 m=96 n=64 k=111 \
    tile_m=3 tile_n=8 tile_k=37 sharing=regcomm
# SW26010-Pro: floatv8 and CRTS DMA (hand and autoscheduled), RMA sharings (dense by the RMA
# broadcast and by the broadcast get, the GEMM's rows and columns).
generate conv_pro_auto "$gen" -g conv2d -f conv_pro_auto -o "$out" -e mpe,cpe,h,report,schedule \
    -p "$plugin" -s Sunway auto_schedule=true target=sw26010-pro in_channels=32 out_channels=32 \
    height=14 width=14 kernel=3 pad=1
generate dense_pro_rma "$gen" -g dense -f dense_pro_rma -o "$out" target=sw26010-pro batch=2 \
    in_features=1001 out_features=201 tile_o=3 tile_n=2 tile_i=77 broadcast=true sharing=regcomm
generate dense_pro_bcast "$gen" -g dense -f dense_pro_bcast -o "$out" target=sw26010-pro batch=2 \
    in_features=1001 out_features=201 tile_o=3 tile_n=2 tile_i=77 broadcast=true sharing=dma
generate matmul_pro_rma "$gen" -g matmul -f matmul_pro_rma -o "$out" target=sw26010-pro m=96 n=64 \
    k=111 tile_m=3 tile_n=8 tile_k=37 sharing=regcomm
generate dense_auto_shared "$gen" -g dense -f dense_auto_shared -o "$out" -e mpe,cpe,h,report,schedule \
    -p "$plugin" -s Sunway auto_schedule=true target=sw26010 batch=16 in_features=1024 out_features=256
# A dense layer of 400,000,000 inputs (divisors in O(sqrt(n))): scheduled at once.
generate dense_huge "$gen" -g dense -f dense_huge -o "$out" target=sw26010 in_features=400000000 out_features=1
# A shape beyond 32-bit arithmetic: a clean error, no sanitizer report.
if "$gen" -g conv2d -o "$out" target=sw26010 height=65536 width=65536 > "$out/overflow.log" 2>&1; then
    echo "FAILED: conv2d height=width=65536 was accepted"; exit 1
fi
grep -q "^error: .*height, in_channels, batch" "$out/overflow.log" ||
    { echo "FAILED: conv2d height=width=65536:"; cat "$out/overflow.log"; exit 1; }
grep -q "Sanitizer" "$out/overflow.log" && { cat "$out/overflow.log"; exit 1; }
echo "  ok: overflow_error"

# ---------------------------------------------------------------- TSan
if [ "${SW_SANITIZE_SKIP_TSAN:-0}" != 1 ]; then
    step "configure and build build-tsan (-DSW_SANITIZE=thread): the emulator tests"
    cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Release -DSW_SANITIZE=thread > build-tsan/sanitize.log 2>&1 ||
        { cat build-tsan/sanitize.log; exit 1; }
    cmake --build build-tsan -j"$jobs" --target emulator_test emulator_pro_test >> build-tsan/sanitize.log 2>&1 ||
        { tail -n 60 build-tsan/sanitize.log; exit 1; }
    step "emulator tests under ThreadSanitizer"
    build-tsan/tests/emulator_test --gtest_filter='-*Dies*:*Deadlock*:*FromHost*' --gtest_brief=1
    # The SW26010-Pro's CRTS DMA, RMA between CPE threads and reply-word waits.
    build-tsan/tests/emulator_pro_test --gtest_filter='-*Stop*' --gtest_brief=1
fi
step "done"
