/** \file
 * sw_net --model end to end, as a user runs it: small ONNX models built here (ModelBuilder),
 * run through the sw_net executable with its own layer cache directory; outputs checked
 * against naive loops, the cache against a second and a changed run, and the errors.
 */
#include "graph/tests/cli_run.h"
#include "graph/tests/model_builder.h"
#include "runtime/io/npy.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#ifndef SW_NET
#error "SW_NET (path of the sw_net executable) must be defined"
#endif

namespace {

using sw_graph_test::CliRun;
using sw_graph_test::ModelBuilder;
using sw_graph_test::run_shell;
namespace fs = std::filesystem;

CliRun sw_net(const std::string &args) {
    return run_shell(std::string(SW_NET) + " " + args);
}

class SwNetModel : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::path(::testing::TempDir()) /
              ("sw_net_model_" +
               std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir);
        fs::create_directories(dir);
        cache = (dir / "cache").string();
    }
    void TearDown() override { fs::remove_all(dir); }
    std::string write(const ModelBuilder &b, const std::string &name) const {
        const std::string path = (dir / name).string();
        std::ofstream(path, std::ios::binary) << b.bytes();
        return path;
    }
    std::string path(const std::string &name) const { return (dir / name).string(); }
    /** Common options: this test's cache, no baseline run. */
    std::string opts() const { return " --cache-dir " + cache + " --no-compare"; }
    fs::path dir;
    std::string cache;
};

/** x (N, C, H, W) -> Relu -> GlobalAveragePool -> y (N, C, 1, 1). */
ModelBuilder relu_gap(const std::vector<int64_t> &dims) {
    ModelBuilder b;
    b.input("x", dims);
    b.node("Relu", {"x"}, {"r"}, "relu0");
    b.node("GlobalAveragePool", {"r"}, {"y"}, "gap0");
    b.output("y");
    return b;
}

std::vector<float> random_input(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(n);
    for (float &x : v)
        x = d(rng);
    return v;
}

TEST_F(SwNetModel, RunsAndMatchesNaiveLoops) {
    const int N = 2, C = 5, H = 7, W = 3; // batch > 1, odd sizes
    const std::string model = write(relu_gap({N, C, H, W}), "m.onnx");
    const std::vector<float> x = random_input(size_t(N * C * H * W), 7);
    sw_io::save_npy(path("x.npy"), {N, C, H, W}, x);
    const CliRun r = sw_net("--model " + model + " --input " + path("x.npy") + " --dump-output " +
                            path("y.npy") + " --report " + path("r.csv") + opts());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("output: 'y' 2x5x1x1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("relu0"), std::string::npos) << r.out; // the per-layer table
    EXPECT_NE(r.out.find("gap0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("total"), std::string::npos) << r.out;
    const sw_io::NpyArray y = sw_io::load_npy(path("y.npy"));
    ASSERT_EQ(y.shape, (std::vector<int64_t>{N, C, 1, 1}));
    for (int n = 0; n < N; n++) {
        for (int c = 0; c < C; c++) {
            double s = 0;
            for (int i = 0; i < H * W; i++)
                s += std::max(0.f, x[size_t((n * C + c) * H * W + i)]);
            EXPECT_NEAR(y.data[size_t(n * C + c)], s / (H * W), 1e-5) << n << "," << c;
        }
    }
    EXPECT_TRUE(fs::file_size(path("r.csv")) > 0);
}

TEST_F(SwNetModel, SecondRunLoadsEveryLayerFromTheCacheAndAChangedModelRecompilesOnlyWhatChanged) {
    const std::string model = write(relu_gap({1, 4, 6, 6}), "m.onnx");
    const std::vector<float> x = random_input(4 * 6 * 6, 3);
    sw_io::save_npy(path("x.npy"), {1, 4, 6, 6}, x);
    const std::string io = " --input " + path("x.npy") + opts();
    const CliRun cold = sw_net("--model " + model + io + " --dump-output " + path("y1.npy"));
    ASSERT_EQ(cold.status, 0) << cold.out;
    EXPECT_NE(cold.out.find("compiled 2 distinct layers for 2 steps"), std::string::npos)
        << cold.out;
    EXPECT_NE(cold.out.find("(0 from the cache"), std::string::npos) << cold.out;
    EXPECT_NE(cold.out.find("[2/2]"), std::string::npos) << cold.out; // progress
    const CliRun warm = sw_net("--model " + model + io + " --dump-output " + path("y2.npy"));
    ASSERT_EQ(warm.status, 0) << warm.out;
    EXPECT_NE(warm.out.find("(2 from the cache"), std::string::npos) << warm.out;
    EXPECT_EQ(sw_io::load_npy(path("y1.npy")).data, sw_io::load_npy(path("y2.npy")).data);

    // One more operator on the same shapes: only the new layer is built.
    ModelBuilder b;
    b.input("x", {1, 4, 6, 6});
    b.node("Relu", {"x"}, {"r"}, "relu0");
    b.node("Sigmoid", {"r"}, {"s"}, "sig0");
    b.node("GlobalAveragePool", {"s"}, {"y"}, "gap0");
    b.output("y");
    const CliRun changed = sw_net("--model " + write(b, "m2.onnx") + io);
    ASSERT_EQ(changed.status, 0) << changed.out;
    EXPECT_NE(changed.out.find("compiled 3 distinct layers for 3 steps"), std::string::npos)
        << changed.out;
    EXPECT_NE(changed.out.find("(2 from the cache"), std::string::npos) << changed.out;
    // --no-cache builds in temporary directories and says so.
    const CliRun nocache =
        sw_net("--model " + model + " --input " + path("x.npy") + " --no-compare --no-cache");
    ASSERT_EQ(nocache.status, 0) << nocache.out;
    EXPECT_NE(nocache.out.find("layer cache: none"), std::string::npos) << nocache.out;
}

/** x (2, 3, 9, 7) -> Conv 3x3 pad 1 (+Relu) -> residual Add with x' (a 1x1 conv of x) -> Relu
 * -> GlobalAveragePool -> Flatten -> Gemm -> y (2, 5): views, weights, a residual. */
ModelBuilder small_net() {
    ModelBuilder b;
    b.input("x", {2, 3, 9, 7});
    b.init_random("w1", {4, 3, 3, 3}, -0.3f, 0.3f);
    b.init_random("b1", {4});
    b.init_random("w2", {4, 3, 1, 1}, -0.3f, 0.3f);
    b.init_random("w3", {5, 4});
    b.init_random("b3", {5});
    auto &c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
    ModelBuilder::attr_ints(c1, "pads", {1, 1, 1, 1});
    b.node("Relu", {"c1"}, {"r1"}, "relu1");
    b.node("Conv", {"x", "w2"}, {"c2"}, "shortcut");
    b.node("Add", {"r1", "c2"}, {"s"}, "residual");
    b.node("Relu", {"s"}, {"r2"}, "relu2");
    b.node("GlobalAveragePool", {"r2"}, {"gap"}, "gap");
    b.node("Flatten", {"gap"}, {"flat"}, "flatten");
    auto &fc = b.node("Gemm", {"flat", "w3", "b3"}, {"y"}, "fc");
    ModelBuilder::attr_i(fc, "transB", 1);
    b.output("y");
    return b;
}

TEST_F(SwNetModel, ExportedFolderBuildsWithGccAgainstTheEmulatorAndReproducesTheOutput) {
    const std::string model = write(small_net(), "net.onnx");
    sw_io::save_npy(path("x.npy"), {2, 3, 9, 7}, random_input(2 * 3 * 9 * 7, 11));
    const std::string out = path("export");
    CliRun r = sw_net("--model " + model + " --input " + path("x.npy") + " --dump-output " +
                      path("y.npy") + " --export " + out + opts());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("exported to " + out), std::string::npos) << r.out;
    for (const char *f : {"README.md", "Makefile", "sw_model.h", "sw_model.c", "main.c",
                          "weights.bin", "HalideRuntime.h"}) {
        EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
    }
    // The host program is plain C99, as sw5cc -host takes it.
    r = run_shell("cc -std=c99 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -I" + out +
                  " -I" + out + "/layers " + out + "/sw_model.c");
    ASSERT_EQ(r.status, 0) << r.out;
    r = run_shell("make -C " + out + " emu");
    ASSERT_EQ(r.status, 0) << r.out;
    r = run_shell(out + "/sw_model_emu " + out + "/weights.bin " + path("x.npy") + " " +
                  path("y_export.npy"));
    ASSERT_EQ(r.status, 0) << r.out;
    const sw_io::NpyArray a = sw_io::load_npy(path("y.npy")),
                          e = sw_io::load_npy(path("y_export.npy"));
    EXPECT_EQ(e.shape, (std::vector<int64_t>{2, 5}));
    EXPECT_EQ(a.shape, e.shape);
    ASSERT_EQ(a.data.size(), e.data.size());
    for (size_t i = 0; i < a.data.size(); i++)
        EXPECT_EQ(a.data[i], e.data[i]) << i;
    // The exported program's own errors: a wrong input shape, a bad weights file.
    sw_io::save_npy(path("bad.npy"), {2, 3, 9, 8}, std::vector<float>(2 * 3 * 9 * 8));
    r = run_shell(out + "/sw_model_emu " + out + "/weights.bin " + path("bad.npy") + " " +
                  path("z.npy"));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("bad.npy"), std::string::npos) << r.out;
    r = run_shell(out + "/sw_model_emu " + path("x.npy") + " " + path("x.npy") + " " +
                  path("z.npy"));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("bad header"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(path("z.npy")));
    // A non-empty export folder is refused before anything is built.
    fs::remove_all(cache);
    r = sw_net("--model " + model + " --input " + path("x.npy") + " --export " + out + opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("not empty"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(cache));
}

TEST_F(SwNetModel, DynamicBatchNeedsAnInputShape) {
    const std::string model = write(relu_gap({-1, 3, 4, 4}), "dyn.onnx");
    CliRun r = sw_net("--model " + model +
                      " --input-shape x=2x3x4x4 --top 3 --image " SW_SAMPLE_IMAGE + opts());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("output: 'y' 2x3x1x1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--top applies to a 2-D"), std::string::npos) << r.out;
    r = sw_net("--model " + model + opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("'x'"), std::string::npos) << r.out;
}

TEST_F(SwNetModel, BadInputIsAClearErrorAndWritesNothing) {
    const std::string model = write(relu_gap({1, 3, 4, 4}), "m.onnx");
    auto expect_error = [&](const std::string &args, const std::string &needle) {
        const CliRun r = sw_net(args);
        EXPECT_EQ(r.status, 1) << args << "\n" << r.out;
        EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << args << "\n" << r.out;
        EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
    };
    // Not an ONNX file; a truncated one.
    std::ofstream(path("junk.onnx")) << "not an onnx file";
    expect_error("--model " + path("junk.onnx") + opts(), "junk.onnx");
    const std::string bytes = relu_gap({1, 3, 4, 4}).bytes();
    std::ofstream(path("cut.onnx"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    expect_error("--model " + path("cut.onnx") + opts(), "cut.onnx");
    expect_error("--model " + path("missing.onnx") + opts(), "missing.onnx");
    // An unsupported operator names the node.
    // (Transpose has a layer since the transformers: Hardmax has none.)
    ModelBuilder t;
    t.input("x", {1, 4, 2, 3});
    t.node("Hardmax", {"x"}, {"y"}, "swap_hw");
    t.output("y");
    expect_error("--model " + write(t, "hardmax.onnx") + opts(), "swap_hw");
    // An input of the wrong shape names the file and both shapes.
    sw_io::save_npy(path("x.npy"), {1, 3, 4, 5}, std::vector<float>(60));
    expect_error("--model " + model + " --input " + path("x.npy") + opts(), "x.npy");
    // --batch with --input, and one that is not a multiple of the model's.
    sw_io::save_npy(path("ok.npy"), {1, 3, 4, 4}, std::vector<float>(48));
    expect_error("--model " + model + " --input " + path("ok.npy") + " --batch 2" + opts(),
                 "--batch");
    // An unwritable report fails before anything is built or written.
    expect_error("--model " + model + " --input " + path("ok.npy") + " --dump-output " +
                     path("y.npy") + " --report /nonexistent/dir/r.csv" + opts(),
                 "/nonexistent/dir/r.csv");
    EXPECT_FALSE(fs::exists(path("y.npy")));
    EXPECT_FALSE(fs::exists(cache));
    // NaN in the input is refused (naming the file), unless allowed.
    std::vector<float> nan_input(48, 0.5f);
    nan_input[7] = NAN;
    sw_io::save_npy(path("nan.npy"), {1, 3, 4, 4}, nan_input);
    expect_error("--model " + model + " --input " + path("nan.npy") + opts(), "nan.npy");
    const CliRun allowed = sw_net("--model " + model + " --input " + path("nan.npy") +
                                  " --allow-nonfinite --dump-output " + path("y.npy") + opts());
    ASSERT_EQ(allowed.status, 0) << allowed.out;
    const sw_io::NpyArray y = sw_io::load_npy(path("y.npy"), sw_io::NonFinite::Allow);
    EXPECT_TRUE(std::isnan(y.data[0])) << "NaN in channel 0 must reach its mean, as in PyTorch";
    EXPECT_FALSE(std::isnan(y.data[1]));
    // Options that do not go together.
    expect_error("--model " + model + " --net alexnet" + opts(), "--net and --model");
    expect_error("--model " + model + " --weights " + dir.string() + opts(), "--weights");
    expect_error("--model " + model + " --channel-div 2" + opts(), "--net only");
    expect_error("--model " + model + " --fc-split" + opts() + " --export " + path("e"),
                 "exclude each other");
}

// ---- issue 12 item 5: --batch N streams the batch. A PNG through x (1, 3, 2048, 2048) ->
// Relu -> Flatten -> y (1, 12582912): one input is 48 MB and so is one pass's output. 24 passes
// run under an address-space limit of 768 MB (ulimit -v), which batch 1 fits in (it needs about
// 300 MB of address space, 210 MB resident) but 24 kept copies of the input or of the output
// (1.2 GB each) do not: preloading the batch, or keeping every pass's output until the end (as
// sw_net did before), fails with "error: out of memory" (checked by reintroducing each).
// MALLOC_ARENA_MAX=1: otherwise glibc reserves 64 MB of address space per malloc arena, up to
// 16 of them for the emulator's 64 CPE threads, a varying amount that would make the limit
// flaky (1 GB was not always enough for batch 1). ASan reserves terabytes of address space:
// its builds run without the limit (and still check the output).
/** x (1, 3, S, S) -> Relu -> Flatten -> y (1, 3 S S). */
ModelBuilder relu_flat(int64_t side) {
    ModelBuilder b;
    b.input("x", {1, 3, side, side});
    b.node("Relu", {"x"}, {"r"}, "relu0");
    b.node("Flatten", {"r"}, {"y"}, "flat0");
    b.output("y");
    return b;
}

bool under_asan() {
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    return false;
}

TEST_F(SwNetModel, BatchIsStreamedUnderAMemoryLimitTheCopiesWouldExceed) {
    const std::string model = write(relu_flat(2048), "big.onnx");
    const std::string limit =
        under_asan() ? "" : "export MALLOC_ARENA_MAX=1; ulimit -v 786432; "; // KiB
    const std::string args =
        " --model " + model + " --image " SW_SAMPLE_IMAGE " --schedule hand --top 1" + opts();
    const CliRun one = run_shell(limit + SW_NET + args + " --batch 1");
    ASSERT_EQ(one.status, 0) << "batch 1 must fit in the limit:\n" << one.out;
    const auto t0 = std::chrono::steady_clock::now();
    const CliRun r = run_shell(limit + SW_NET + args + " --batch 24");
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("24 pass(es)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("output: 'y' 24x12582912"), std::string::npos) << r.out;
    // One top-1 block per image, all the same image.
    const size_t first = r.out.find("image 0: top-1 (value)");
    ASSERT_NE(first, std::string::npos) << r.out;
    const size_t line_start = r.out.find('\n', first) + 1;
    const std::string line =
        r.out.substr(line_start, r.out.find('\n', line_start) - line_start); // value, class
    int blocks = 0;
    for (size_t at = 0; (at = r.out.find("\nimage ", at)) != std::string::npos; at++)
        blocks++;
    EXPECT_EQ(blocks, 24) << r.out;
    EXPECT_NE(r.out.find("image 23: top-1 (value)\n" + line), std::string::npos) << line << "\n"
                                                                                 << r.out;
    EXPECT_EQ(r.out.find("image 24:"), std::string::npos) << r.out;
    std::printf("24 passes of a 48 MB input and output in %.1f s under ulimit -v %s\n", secs,
                limit.empty() ? "(none: ASan)" : "786432");
}

TEST_F(SwNetModel, BatchDumpIsWrittenPassByPass) {
    // --dump-output with --batch 3: written pass by pass, the whole (3, 48) array.
    const std::string model = write(relu_flat(4), "small.onnx");
    const CliRun r = sw_net("--model " + model +
                            " --image " SW_SAMPLE_IMAGE " --batch 3 --top 2 --dump-output " +
                            path("y.npy") + opts());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("image 2: top-2 (value)"), std::string::npos) << r.out;
    const sw_io::NpyArray y = sw_io::load_npy(path("y.npy"));
    ASSERT_EQ(y.shape, (std::vector<int64_t>{3, 48}));
    for (int i = 0; i < 48; i++) {
        EXPECT_GE(y.data[size_t(i)], 0.f);
        EXPECT_EQ(y.data[size_t(48 + i)], y.data[size_t(i)]);
        EXPECT_EQ(y.data[size_t(96 + i)], y.data[size_t(i)]);
    }
}

#ifdef SW_MPIRUN
// Data parallel under mpirun -np 2 (dist/): --batch 3 over 2 ranks (2 + 1 passes), the
// dumped output equal to the single-rank run's bit for bit, the top classes printed once.
TEST_F(SwNetModel, DataParallelUnderMpirunEqualsOneRank) {
    const std::string model = write(relu_flat(4), "small.onnx");
    const std::string common =
        "--model " + model + " --image " SW_SAMPLE_IMAGE " --batch 3 --top 2" + opts();
    const CliRun one = sw_net(common + " --dump-output " + path("one.npy"));
    ASSERT_EQ(one.status, 0) << one.out;
    const CliRun two =
        run_shell("timeout 120 " SW_MPIRUN " --allow-run-as-root --oversubscribe -np 2 " +
                  std::string(SW_NET) + " " + common + " --dump-output " + path("two.npy"));
    ASSERT_EQ(two.status, 0) << two.out;
    const sw_io::NpyArray a = sw_io::load_npy(path("one.npy")),
                          b = sw_io::load_npy(path("two.npy"));
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.data, b.data);
    EXPECT_NE(two.out.find("image 2: top-2 (value)"), std::string::npos) << two.out;
    EXPECT_EQ(two.out.find("image 3:"), std::string::npos) << two.out;
    EXPECT_NE(two.out.find("job: 2 rank(s) on 1 node(s), 3 image(s)"), std::string::npos)
        << two.out;
}

// --fc-split for a model (the executor's dense steps split by output rows over the ranks,
// apps/fc_split.h): small_net's Gemm of 5 outputs over 2 ranks (3 + 2 rows), batch 2; the
// output equals the single-rank run's within float tolerance.
TEST_F(SwNetModel, FcSplitUnderMpirunMatchesOneRank) {
    const std::string model = write(small_net(), "net.onnx");
    sw_io::save_npy(path("x.npy"), {2, 3, 9, 7}, random_input(2 * 3 * 9 * 7, 13));
    const std::string common =
        "--model " + model + " --input " + path("x.npy") + " --schedule hand" + opts();
    const CliRun one = sw_net(common + " --dump-output " + path("one.npy"));
    ASSERT_EQ(one.status, 0) << one.out;
    const CliRun two = run_shell(
        "timeout 300 " SW_MPIRUN " --allow-run-as-root --oversubscribe -np 2 " +
        std::string(SW_NET) + " --fc-split " + common + " --dump-output " + path("two.npy"));
    ASSERT_EQ(two.status, 0) << two.out;
    EXPECT_NE(two.out.find("rank 0: fc rows 0-2 of 5"), std::string::npos) << two.out;
    EXPECT_NE(two.out.find("fc-split over 2 core group(s): modelled "), std::string::npos)
        << two.out;
    const sw_io::NpyArray a = sw_io::load_npy(path("one.npy")),
                          b = sw_io::load_npy(path("two.npy"));
    ASSERT_EQ(a.shape, b.shape);
    for (size_t i = 0; i < a.data.size(); i++)
        EXPECT_NEAR(a.data[i], b.data[i], 1e-6 + 1e-5 * std::fabs(a.data[i])) << i;
}
#endif

} // namespace

namespace {

/** x float (2, 3) + Cast(ids int64 (2, 3)) -> y: a model of two inputs, one of them int64. */
ModelBuilder two_inputs() {
    ModelBuilder b;
    b.input("x", {2, 3});
    b.input("ids", {2, 3}, onnx::TensorProto_DataType_INT64);
    auto &c = b.node("Cast", {"ids"}, {"f"}, "to_float");
    ModelBuilder::attr_i(c, "to", onnx::TensorProto_DataType_FLOAT);
    b.node("Add", {"x", "f"}, {"y"}, "sum");
    b.output("y");
    return b;
}

/** x float (2, 1, 3), ids int64 (2, 3): Unsqueeze(ids) (a view of the int64 input) -> Cast
 * -> + x -> s; y = Gather(s, [1, 0]) (constant int64 indices left unfolded: the layer reads
 * them from the weights), i.e. y[0] = s[1], y[1] = s[0]. */
ModelBuilder two_inputs_with_views() {
    ModelBuilder b;
    b.input("x", {2, 1, 3});
    b.input("ids", {2, 3}, onnx::TensorProto_DataType_INT64);
    b.init_ints("axes", {1});
    b.node("Unsqueeze", {"ids", "axes"}, {"u"}, "ids_u");
    auto &c = b.node("Cast", {"u"}, {"f"}, "to_float");
    ModelBuilder::attr_i(c, "to", onnx::TensorProto_DataType_FLOAT);
    b.node("Add", {"x", "f"}, {"s"}, "sum");
    b.init_ints("order", {1, 0});
    b.node("Gather", {"s", "order"}, {"y"}, "swap");
    b.output("y");
    return b;
}

/** An int64 (or, \p bytes 4, int32) .npy (version 1.0, C order) written here byte by byte. */
void save_int64_npy(const std::string &path, const std::vector<int64_t> &shape,
                    const std::vector<int64_t> &data, int bytes = 8) {
    std::string dims;
    for (size_t i = 0; i < shape.size(); i++)
        dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
    std::string header = "{'descr': '<i" + std::to_string(bytes) +
                         "', 'fortran_order': False, 'shape': (" + dims + "), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::ofstream f(path, std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                  static_cast<unsigned char>(header.size() >> 8)};
    f.write(reinterpret_cast<const char *>(len), 2);
    f << header;
    if (bytes == 4) {
        for (int64_t v : data) {
            const int32_t w = static_cast<int32_t>(v);
            f.write(reinterpret_cast<const char *>(&w), 4);
        }
    } else {
        f.write(reinterpret_cast<const char *>(data.data()), std::streamsize(data.size() * 8));
    }
}

} // namespace

// Several inputs, one int64: each given as --input name=file.npy; the output is x + ids.
// Errors: an input missing, an unknown name, one given twice, an int64 file for a float
// input, --batch other than the model's.
TEST_F(SwNetModel, NamedAndInt64Inputs) {
    const std::string model = write(two_inputs(), "two.onnx");
    const std::vector<float> x = random_input(6, 3);
    const std::vector<int64_t> ids = {0, -7, 123456, 5, 1 << 20, -1};
    sw_io::save_npy(path("x.npy"), {2, 3}, x);
    save_int64_npy(path("ids.npy"), {2, 3}, ids);
    CliRun r = sw_net("--model " + model + " --input x=" + path("x.npy") + " --input ids=" +
                      path("ids.npy") + " --dump-output " + path("y.npy") + opts());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("inputs: x float32 2x3 from"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ids int64 2x3 from"), std::string::npos) << r.out;
    const sw_io::NpyArray y = sw_io::load_npy(path("y.npy"));
    ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 3}));
    for (size_t i = 0; i < 6; i++)
        EXPECT_EQ(y.data[i], x[i] + float(ids[i])) << i;

    r = sw_net("--model " + model + " --input x=" + path("x.npy") + opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("error: " + model + ": input 'ids' (int64 2x3) has no data"),
              std::string::npos)
        << r.out;
    r = sw_net("--model " + model + " --input x=" + path("x.npy") +
               " --input tokens=" + path("ids.npy") + opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("the model has no input 'tokens' (its inputs: 'x', 'ids')"),
              std::string::npos)
        << r.out;
    r = sw_net("--model " + model + " --input x=" + path("x.npy") + " --input x=" + path("x.npy") +
               opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("input 'x' given twice"), std::string::npos) << r.out;
    r = sw_net("--model " + model + " --input x=" + path("ids.npy") +
               " --input ids=" + path("ids.npy") + opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("dtype '<i8' is not supported"), std::string::npos) << r.out;
    r = sw_net("--model " + model + " --input x=" + path("x.npy") +
               " --input ids=" + path("x.npy") + opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("dtype '<f4' is not an integer type"), std::string::npos) << r.out;
    r = sw_net("--model " + model + " --input x=" + path("x.npy") +
               " --input ids=" + path("ids.npy") + " --batch 4" + opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("--batch 4"), std::string::npos) << r.out;
    r = sw_net("--model " + model + " --input " + path("x.npy") +
               " --input ids=" + path("ids.npy") + opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("each is name=file.npy"), std::string::npos) << r.out;
}

// A model of two outputs of different ranks (x (2, 3, 5) -> Relu -> r, then
// ReduceMax over the last axis -> m (2, 3)): --dump-output PATH writes the first, NAME=PATH
// any output, both against naive loops; an output given twice and a missing path are errors.
TEST_F(SwNetModel, EveryOutputCanBeDumped) {
    ModelBuilder b;
    b.input("x", {2, 3, 5});
    b.node("Relu", {"x"}, {"r"}, "relu0");
    auto &m = b.node("ReduceMax", {"r"}, {"m"}, "max0");
    ModelBuilder::attr_ints(m, "axes", {-1});
    ModelBuilder::attr_i(m, "keepdims", 0);
    b.output("r");
    b.output("m");
    const std::string model = write(b, "two_out.onnx");
    const std::vector<float> x = random_input(30, 5);
    sw_io::save_npy(path("x.npy"), {2, 3, 5}, x);
    CliRun r = sw_net("--model " + model + " --input " + path("x.npy") + " --dump-output " +
                      path("r.npy") + " --dump-output m=" + path("m.npy") + opts());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("output 'r' written to"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("output 'm' written to"), std::string::npos) << r.out;
    const sw_io::NpyArray rv = sw_io::load_npy(path("r.npy")), mv = sw_io::load_npy(path("m.npy"));
    ASSERT_EQ(rv.shape, (std::vector<int64_t>{2, 3, 5}));
    ASSERT_EQ(mv.shape, (std::vector<int64_t>{2, 3}));
    for (size_t row = 0; row < 6; row++) {
        float most = 0;
        for (size_t k = 0; k < 5; k++) {
            EXPECT_EQ(rv.data[row * 5 + k], std::max(0.f, x[row * 5 + k]));
            most = std::max(most, std::max(0.f, x[row * 5 + k]));
        }
        EXPECT_EQ(mv.data[row], most) << row;
    }
    r = sw_net("--model " + model + " --input " + path("x.npy") +
               " --dump-output m=" + path("a.npy") + " --dump-output m=" + path("b.npy") + opts());
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("--dump-output: output 'm' is given twice"), std::string::npos) << r.out;
    r = sw_net("--model " + model + " --input " + path("x.npy") + " --dump-output m=" + opts());
    EXPECT_EQ(r.status, 1) << r.out;
}

// Exported with two inputs, one int64 (read through a view, an Unsqueeze), and int64
// constant indices (a Gather's): sw_model_run_inputs, main.c taking one .npy per input in
// the model's order ('<i8', or '<i4' widened, for the int64 one), built with gcc against the
// emulator, reproduces sw_net's output bit for bit. The exported program's errors: a wrong
// number of arguments, a wrong dtype for either input, a wrong shape.
TEST_F(SwNetModel, ExportedFolderWithAnInt64InputReproducesTheOutput) {
    const std::string model = write(two_inputs_with_views(), "two.onnx");
    const std::vector<float> x = random_input(6, 5);
    const std::vector<int64_t> ids = {0, -7, 123456, 5, 1 << 20, -1};
    sw_io::save_npy(path("x.npy"), {2, 1, 3}, x);
    save_int64_npy(path("ids.npy"), {2, 3}, ids);
    save_int64_npy(path("ids32.npy"), {2, 3}, ids, 4);
    const std::string out = path("export");
    CliRun r = sw_net("--model " + model + " --input x=" + path("x.npy") +
                      " --input ids=" + path("ids.npy") + " --dump-output " + path("y.npy") +
                      " --export " + out + opts());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("exported to " + out), std::string::npos) << r.out;
    const sw_io::NpyArray a = sw_io::load_npy(path("y.npy"));
    ASSERT_EQ(a.shape, (std::vector<int64_t>{2, 1, 3}));
    for (size_t i = 0; i < 6; i++) // y[0] = s[1], y[1] = s[0]
        EXPECT_EQ(a.data[i], x[(i + 3) % 6] + float(ids[(i + 3) % 6])) << i;
    // The host program is plain C99; the API names each input.
    r = run_shell("cc -std=c99 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -I" + out +
                  " -I" + out + "/layers " + out + "/sw_model.c");
    ASSERT_EQ(r.status, 0) << r.out;
    std::ifstream hf(out + "/sw_model.h");
    const std::string h((std::istreambuf_iterator<char>(hf)), std::istreambuf_iterator<char>());
    EXPECT_NE(h.find("#define SW_MODEL_INPUTS 2"), std::string::npos) << h;
    EXPECT_NE(h.find("#define SW_MODEL_INPUT_NAMES {\"x\", \"ids\"}"), std::string::npos) << h;
    EXPECT_NE(h.find("#define SW_MODEL_INPUT1_TYPE SW_MODEL_INT64"), std::string::npos) << h;
    EXPECT_NE(h.find("int sw_model_run_inputs(sw_model *m, const void *const *inputs, float "
                     "*output);"),
              std::string::npos)
        << h;
    EXPECT_EQ(h.find("int sw_model_run("), std::string::npos) << h; // one float32 input only
    r = run_shell("make -C " + out + " emu");
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string prog = out + "/sw_model_emu " + out + "/weights.bin ";
    for (const char *ids_file : {"ids.npy", "ids32.npy"}) {
        fs::remove(path("y_export.npy"));
        r = run_shell(prog + path("x.npy") + " " + path(ids_file) + " " + path("y_export.npy"));
        ASSERT_EQ(r.status, 0) << ids_file << ": " << r.out;
        const sw_io::NpyArray e = sw_io::load_npy(path("y_export.npy"));
        EXPECT_EQ(a.shape, e.shape);
        ASSERT_EQ(a.data.size(), e.data.size());
        for (size_t i = 0; i < a.data.size(); i++)
            EXPECT_EQ(a.data[i], e.data[i]) << ids_file << " " << i;
    }
    // A wrong number of arguments: the usage line with one .npy per input, in order.
    r = run_shell(prog + path("x.npy") + " " + path("z.npy"));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("error: 3 argument(s), 4 expected"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("WEIGHTS.bin INPUT0.npy INPUT1.npy OUTPUT.npy"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("input 1 'ids': int64"), std::string::npos) << r.out;
    // Wrong dtypes, the inputs swapped; a wrong shape.
    r = run_shell(prog + path("x.npy") + " " + path("x.npy") + " " + path("z.npy"));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("error: " + path("x.npy") +
                         ": not a C-order int64 ('<i8') or int32 ('<i4') array (input 'ids' is "
                         "int64)"),
              std::string::npos)
        << r.out;
    r = run_shell(prog + path("ids.npy") + " " + path("ids.npy") + " " + path("z.npy"));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("error: " + path("ids.npy") +
                         ": not a C-order float32 ('<f4') array (input 'x' is float32)"),
              std::string::npos)
        << r.out;
    save_int64_npy(path("ids_bad.npy"), {3, 2}, ids);
    r = run_shell(prog + path("x.npy") + " " + path("ids_bad.npy") + " " + path("z.npy"));
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("input 'ids' takes shape (2, 3), the file has (3, 2)"), std::string::npos)
        << r.out;
    EXPECT_FALSE(fs::exists(path("z.npy")));
}

#ifdef SW_TRANSFORMER_SCRIPT
// A tiny BERT of scripts/export_transformer.py (int64 inputs ids and mask, the mask's
// Unsqueeze a view of an input) exported: built with make emu and run on the two .npy files
// export_transformer.py wrote, in the model's input order, it reproduces sw_net's output bit
// for bit (and that is PyTorch's within 1e-3). Skipped when torch cannot be imported.
TEST_F(SwNetModel, ExportedBertReproducesTheOutput) {
    const std::string d = path("bert"), base = d + "/bert";
    CliRun r = run_shell(std::string(SW_TORCH_PYTHON) + " '" + SW_TRANSFORMER_SCRIPT +
                         "' --model bert --layers 1 --hidden 32 --heads 4 --ffn 64 --vocab 100 "
                         "--seq 8 --batch 2 --out '" +
                         d + "'");
    if (r.status == 2 || r.status == 127)
        GTEST_SKIP() << "torch not importable with " << SW_TORCH_PYTHON << ": " << r.out;
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string out = path("export");
    r = sw_net("--model " + base + ".onnx --input ids=" + base + ".ids.npy --input mask=" + base +
               ".mask.npy --dump-output " + path("y.npy") + " --export " + out + opts());
    ASSERT_EQ(r.status, 0) << r.out;
    r = run_shell("cc -std=c99 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -I" + out +
                  " -I" + out + "/layers " + out + "/sw_model.c");
    ASSERT_EQ(r.status, 0) << r.out;
    r = run_shell("make -C " + out + " emu");
    ASSERT_EQ(r.status, 0) << r.out;
    r = run_shell(out + "/sw_model_emu " + out + "/weights.bin " + base + ".ids.npy " + base +
                  ".mask.npy " + path("y_export.npy"));
    ASSERT_EQ(r.status, 0) << r.out;
    const sw_io::NpyArray a = sw_io::load_npy(path("y.npy")),
                          e = sw_io::load_npy(path("y_export.npy")),
                          want = sw_io::load_npy(base + ".hidden.npy");
    ASSERT_EQ(a.shape, (std::vector<int64_t>{2, 8, 32}));
    EXPECT_EQ(e.shape, a.shape);
    ASSERT_EQ(e.data.size(), a.data.size());
    ASSERT_EQ(want.data.size(), a.data.size());
    for (size_t i = 0; i < a.data.size(); i++) {
        EXPECT_EQ(a.data[i], e.data[i]) << i;
        EXPECT_NEAR(a.data[i], want.data[i], 1e-3) << i;
    }
}
#endif

#ifdef SW_EXPORT_SCRIPT
// torchvision's FCN-ResNet50 (issue 24) at 32x32 of scripts/export_torchvision.py: the
// segmentation model (dilated convs, the bilinear Resize to 21 x 32 x 32) exported, built with
// make emu and run on the input export_torchvision.py wrote, reproduces sw_net's output bit for
// bit, and that is PyTorch's `out` within 1e-3 of its largest magnitude. Skipped when torch
// cannot be imported.
TEST_F(SwNetModel, ExportedFcnReproducesTheOutput) {
    const std::string d = path("fcn"), base = d + "/fcn_resnet50";
    CliRun r = run_shell(std::string(SW_TORCH_PYTHON) + " '" + SW_EXPORT_SCRIPT +
                         "' --model fcn_resnet50 --size 32 --out '" + d + "'");
    if (r.status == 2 || r.status == 127)
        GTEST_SKIP() << "torch not importable with " << SW_TORCH_PYTHON << ": " << r.out;
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string out = path("export");
    r = sw_net("--model " + base + ".onnx --input " + base + ".input.npy --dump-output " +
               path("y.npy") + " --export " + out + opts());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("Resize"), std::string::npos) << r.out;
    r = run_shell("cc -std=c99 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only -I" + out +
                  " -I" + out + "/layers " + out + "/sw_model.c");
    ASSERT_EQ(r.status, 0) << r.out;
    r = run_shell("make -C " + out + " emu");
    ASSERT_EQ(r.status, 0) << r.out;
    r = run_shell(out + "/sw_model_emu " + out + "/weights.bin " + base + ".input.npy " +
                  path("y_export.npy"));
    ASSERT_EQ(r.status, 0) << r.out;
    const sw_io::NpyArray a = sw_io::load_npy(path("y.npy")),
                          e = sw_io::load_npy(path("y_export.npy")),
                          want = sw_io::load_npy(base + ".logits.npy");
    ASSERT_EQ(a.shape, (std::vector<int64_t>{1, 21, 32, 32}));
    EXPECT_EQ(e.shape, a.shape);
    ASSERT_EQ(e.data.size(), a.data.size());
    ASSERT_EQ(want.data.size(), a.data.size());
    double largest = 0;
    for (float v : want.data)
        largest = std::max(largest, std::fabs(double(v)));
    int differ = 0;
    for (size_t i = 0; i < a.data.size(); i++) {
        differ += a.data[i] != e.data[i];
        EXPECT_NEAR(a.data[i], want.data[i], 1e-3 * largest) << i;
    }
    EXPECT_EQ(differ, 0) << "of " << a.data.size() << " values";
}
#endif
