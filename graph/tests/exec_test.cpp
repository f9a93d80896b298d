/** \file
 * Whole graphs on the emulated SW26010 (graph/Executor.h): (a) ONNX conformance node tests
 * (Debian's libonnx-testdata) imported and run through the executor, compared with their
 * output_0.pb; (b) a multi-node model built here (conv -> batch norm -> relu -> max pool ->
 * conv -> residual add -> batch norm -> global average pool -> flatten -> gemm -> softmax,
 * 5 and 7 channels, batch 2) against naive loops; (c) errors naming the node. The CLI
 * (sw_net --model) is tested in sw_net_model_test.cpp.
 */
#include "graph/Executor.h"
#include "graph/Export.h"
#include "graph/Import.h"
#include "graph/OnnxReader.h"
#include "graph/Passes.h"
#include "graph/tests/model_builder.h"
#include "jit/jit_layer.h"
#include "reference/naive_layers.h"
#include "runtime/locate.h"
#include "runtime/net/report.h"
#include "target_sw/Roofline.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#ifndef SW_ONNX_TEST_DATA
#define SW_ONNX_TEST_DATA "/usr/share/libonnx-testdata/data"
#endif

using sw_graph_test::ModelBuilder;
using sw_graph_test::random_values;

namespace {

bool exists(const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0;
}

void expect_close(const std::vector<float> &actual, const std::vector<float> &expected,
                  const std::string &what, double tol = 1e-4) {
    ASSERT_EQ(actual.size(), expected.size()) << what;
    int bad = 0;
    for (size_t i = 0; i < actual.size(); i++) {
        const double d = std::fabs(double(actual[i]) - expected[i]);
        if (!(d <= tol + tol * std::fabs(expected[i]))) {
            if (bad++ < 5)
                ADD_FAILURE() << what << "[" << i << "]: " << actual[i] << " vs " << expected[i];
        }
    }
    EXPECT_EQ(bad, 0) << what;
}

// ------------------------------------------------------------- (a) conformance node tests

class NodeTest : public ::testing::TestWithParam<const char *> {};

TEST_P(NodeTest, MatchesOutput) {
    const std::string dir = std::string(SW_ONNX_TEST_DATA) + "/node/" + GetParam();
    if (!exists(dir + "/model.onnx"))
        GTEST_SKIP() << dir << " not found (install libonnx-testdata)";
    // int64 inputs (a Reduce's axes, given as inputs by the test data, held as constants by
    // an exported model) frozen to test_data_set_0's values, as onnx_data_test does.
    sw_graph::Graph g = sw_graph::read_onnx_file(dir + "/model.onnx");
    for (const std::string name : std::vector<std::string>(g.inputs)) {
        if (g.tensor(name).dtype != sw_graph::DType::Int64)
            continue;
        const size_t k =
            size_t(std::find(g.inputs.begin(), g.inputs.end(), name) - g.inputs.begin());
        sw_graph::Tensor v = sw_graph::read_onnx_tensor_file(dir + "/test_data_set_0/input_" +
                                                             std::to_string(k) + ".pb");
        v.name = name;
        g.tensors[name] = v;
        g.inputs.erase(g.inputs.begin() + long(k));
    }
    sw_graph::infer_shapes(g);
    sw_graph::run_passes(g);
    sw_graph::Executor ex(g);
    int sets = 0;
    for (int s = 0; exists(dir + "/test_data_set_" + std::to_string(s)); s++, sets++) {
        const std::string d = dir + "/test_data_set_" + std::to_string(s) + "/";
        std::map<std::string, std::vector<float>> inputs;
        for (size_t k = 0; k < g.inputs.size(); k++) {
            inputs[g.inputs[k]] =
                sw_graph::read_onnx_tensor_file(d + "input_" + std::to_string(k) + ".pb").f32;
        }
        const sw_graph::ExecResult r = ex.run(inputs);
        ASSERT_EQ(g.outputs.size(), 1u);
        const sw_graph::Tensor want = sw_graph::read_onnx_tensor_file(d + "output_0.pb");
        const sw_graph::Tensor &got = r.outputs.at(g.outputs[0]);
        EXPECT_EQ(got.shape, want.shape);
        expect_close(got.f32, want.f32, std::string(GetParam()) + " set " + std::to_string(s));
        EXPECT_GT(r.modelled_seconds, 0.0);
    }
    EXPECT_GT(sets, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Onnx, NodeTest,
    ::testing::Values("test_conv_with_strides_padding", "test_maxpool_2d_pads", "test_relu",
                      "test_add_bcast", "test_globalaveragepool", "test_gemm_transposeB",
                      "test_concat_3d_axis_1", "test_softmax_example", "test_averagepool_2d_pads",
                      "test_hardsigmoid", "test_hardswish",
                      // HardSigmoid + Mul, fused by fuse_hard_swish
                      "test_hardswish_expanded",
                      // Softmax over a first or middle axis, Reduce* over
                      // axes that are not trailing
                      // (move_reduced_axes_last: Transpose first)
                      "test_softmax_axis_0", "test_softmax_axis_1", "test_softmax_negative_axis",
                      "test_reduce_max_keepdims_random", "test_reduce_max_do_not_keepdims_random",
                      "test_reduce_max_default_axes_keepdims_random",
                      "test_reduce_mean_keepdims_random", "test_reduce_mean_do_not_keepdims_random",
                      "test_reduce_sum_keepdims_random", "test_reduce_sum_do_not_keepdims_random",
                      "test_reduce_sum_default_axes_keepdims_random"),
    [](const ::testing::TestParamInfo<const char *> &i) { return std::string(i.param); });

// ------------------------------------------------------------- (b) a small network

struct Net {
    ModelBuilder b;
    std::vector<float> w1, b1, g1, be1, m1, v1, w2, b2, g2, be2, m2, v2, w3, b3;
    static constexpr int N = 2, C0 = 5, C = 7, H = 8, W = 8, K = 10;

    std::vector<float> positive(const std::string &name, int n) {
        std::vector<float> v = b.init_random(name, {n}, 0.5f, 1.5f);
        return v;
    }

    Net() {
        b.input("x", {N, C0, H, W});
        w1 = b.init_random("w1", {C, C0, 3, 3}, -0.3f, 0.3f);
        b1 = b.init_random("b1", {C});
        g1 = positive("g1", C);
        be1 = b.init_random("be1", {C});
        m1 = b.init_random("m1", {C});
        v1 = positive("v1", C);
        w2 = b.init_random("w2", {C, C, 3, 3}, -0.2f, 0.2f);
        b2 = b.init_random("b2", {C});
        g2 = positive("g2", C);
        be2 = b.init_random("be2", {C});
        m2 = b.init_random("m2", {C});
        v2 = positive("v2", C);
        w3 = b.init_random("w3", {K, C});
        b3 = b.init_random("b3", {K});
        auto &c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
        ModelBuilder::attr_ints(c1, "pads", {1, 1, 1, 1});
        b.node("BatchNormalization", {"c1", "g1", "be1", "m1", "v1"}, {"bn1"}, "bn1");
        b.node("Relu", {"bn1"}, {"r1"}, "relu1");
        auto &p = b.node("MaxPool", {"r1"}, {"p1"}, "pool1");
        ModelBuilder::attr_ints(p, "kernel_shape", {2, 2});
        ModelBuilder::attr_ints(p, "strides", {2, 2});
        auto &c2 = b.node("Conv", {"p1", "w2", "b2"}, {"c2"}, "conv2");
        ModelBuilder::attr_ints(c2, "pads", {1, 1, 1, 1});
        b.node("Add", {"p1", "c2"}, {"s"}, "residual");
        // BN after an add: not foldable, runs as channel_affine.
        b.node("BatchNormalization", {"s", "g2", "be2", "m2", "v2"}, {"bn2"}, "bn2");
        b.node("GlobalAveragePool", {"bn2"}, {"gap"}, "gap");
        b.node("Flatten", {"gap"}, {"flat"}, "flatten");
        auto &fc = b.node("Gemm", {"flat", "w3", "b3"}, {"logits"}, "fc");
        ModelBuilder::attr_i(fc, "transB", 1);
        b.node("Softmax", {"logits"}, {"prob"}, "softmax");
        b.output("prob");
    }

    static std::vector<float> bn(const std::vector<float> &x, int n, int c, int plane,
                                 const std::vector<float> &g, const std::vector<float> &be,
                                 const std::vector<float> &m, const std::vector<float> &v) {
        std::vector<float> r(x.size());
        for (size_t i = 0; i < x.size(); i++) {
            const int ch = int((i / plane) % c);
            r[i] = float((x[i] - m[ch]) / std::sqrt(double(v[ch]) + 1e-5) * g[ch] + be[ch]);
        }
        (void)n;
        return r;
    }

    std::vector<float> reference(const std::vector<float> &x) const {
        using namespace reference;
        auto c1 = conv2d(Conv2DParams::square(N, C0, C, H, W, 3, 1, 1, false), x, w1, b1);
        auto r1 = relu(bn(c1, N, C, H * W, g1, be1, m1, v1));
        PoolParams pp{N, C, H, W, 2, 2, 2, 2, 0, 0, 0, 0, false, true, false};
        auto p1 = pool2d(pp, r1);
        auto c2 = conv2d(Conv2DParams::square(N, C, C, H / 2, W / 2, 3, 1, 1, false), p1, w2, b2);
        const Shape4 s4{N, C, H / 2, W / 2};
        auto s = eltwise(s4, s4, p1, s4, c2, false, false);
        auto b2n = bn(s, N, C, (H / 2) * (W / 2), g2, be2, m2, v2);
        auto gp = global_pool(s4, b2n, false);
        auto fc = dense(N, C, K, gp, w3, b3, false);
        return softmax(N, K, fc);
    }
};

TEST(Executor, SmallResidualNetwork) {
    Net net;
    sw_graph::Graph g = net.b.infer();
    sw_graph::run_passes(g);
    sw_graph::Executor ex(g);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> x(size_t(Net::N) * Net::C0 * Net::H * Net::W);
    for (float &v : x)
        v = d(rng);
    const sw_graph::ExecResult r = ex.run({{"x", x}});
    const sw_graph::Tensor &prob = r.outputs.at("prob");
    EXPECT_EQ(prob.shape, (std::vector<int64_t>{Net::N, Net::K}));
    expect_close(prob.f32, net.reference(x), "prob");

    // conv1+bn1+relu1 are one conv2d (BN folded, Relu fused); bn2 is channel_affine.
    std::vector<std::string> gens;
    for (const sw_graph::StepResult &s : r.steps) {
        gens.push_back(s.generator.empty() ? "view" : s.generator);
        std::printf("[step] %-32s %-8s %-16s %.4f ms (%d kernels)\n", s.node.c_str(),
                    s.op_type.c_str(), s.generator.c_str(), s.record.modelled_seconds * 1e3,
                    s.record.kernels);
        if (s.layer >= 0)
            EXPECT_GT(s.record.modelled_seconds, 0.0) << s.node;
    }
    std::printf("[total] %.4f ms modelled, %d distinct layers\n", r.modelled_seconds * 1e3,
                r.distinct_layers);
    // conv2 and the residual add are one conv2d (residual=true).
    EXPECT_EQ(gens, (std::vector<std::string>{"conv2d", "pool", "conv2d", "channel_affine",
                                              "global_pool", "view", "dense", "softmax"}));
    EXPECT_EQ(r.steps[0].op_type, "Conv+Relu");
    EXPECT_EQ(r.steps[2].op_type, "Conv+Add");
    EXPECT_EQ(r.distinct_layers, 7);

    // A second run reuses the built layers and gives the same result.
    const sw_graph::ExecResult r2 = ex.run({{"x", x}});
    EXPECT_EQ(r2.outputs.at("prob").f32, prob.f32);
}

// ShuffleNetV2's unit (Slice or Split of the channels, Concat, the Reshape-Transpose-Reshape
// channel shuffle) against naive loops: channel_slice, concat and channel_shuffle layers.
// The persistent layer cache (jit/jit_layer.h) and the export plan (Export.h), in process:
// a second Executor on the same graph loads every layer from the cache, and the exported
// folder holds every layer and a weights file of the documented size.
TEST(Executor, CacheAndExport) {
    Net net;
    sw_graph::Graph g = net.b.infer();
    sw_graph::run_passes(g);
    const std::string dir = ::testing::TempDir() + "/sw_exec_cache_export";
    std::filesystem::remove_all(dir);
    sw_graph::ExecOptions o;
    o.cache_dir = dir + "/cache";
    o.schedule = "hand";
    int progress_calls = 0;
    o.progress = [&](const sw_graph::BuildProgress &p) {
        progress_calls++;
        EXPECT_LE(p.done, p.total);
    };
    std::vector<float> x(size_t(Net::N) * Net::C0 * Net::H * Net::W, 0.25f);
    std::vector<float> first;
    {
        sw_graph::Executor ex(g, o);
        EXPECT_EQ(progress_calls, 7); // 7 distinct layers (conv2 + the residual add fused)
        for (const sw_graph::LayerBuildInfo &b : ex.builds())
            EXPECT_FALSE(b.from_cache);
        first = ex.run({{"x", x}}).outputs.at("prob").f32;
    }
    // (In one process the second Executor gets the same loaded layers; sw_net_model_test
    // checks that a second process loads them from the directory.)
    sw_graph::Executor ex(g, o);
    for (int i = 0; i < (int)ex.builds().size(); i++) {
        EXPECT_EQ(ex.builds()[size_t(i)].schedule, "hand");
        EXPECT_EQ(ex.layer_directory(i).rfind(o.cache_dir + "/", 0), 0u) << ex.layer_directory(i);
        EXPECT_TRUE(std::filesystem::exists(ex.layer_directory(i) + "/key.txt"));
    }
    EXPECT_EQ(ex.run({{"x", x}}).outputs.at("prob").f32, first);

    const sw_graph::ExportSummary e = sw_graph::export_model(ex, "net.onnx", dir + "/export");
    EXPECT_EQ(e.layers, 7);
    EXPECT_EQ(e.steps, 8);
    EXPECT_LT(e.arena_bytes, e.unshared_bytes); // a chain: buffers are reused
    EXPECT_EQ(std::filesystem::file_size(dir + "/export/weights.bin"),
              32 + 4 * uint64_t(e.weight_floats));
    std::ifstream c(dir + "/export/sw_model.c");
    const std::string program((std::istreambuf_iterator<char>(c)),
                              std::istreambuf_iterator<char>());
    for (int i = 0; i < e.layers; i++) {
        const std::string fn = ex.layer_function(i);
        EXPECT_NE(program.find(fn + "(&b[0]"), std::string::npos) << fn;
        EXPECT_TRUE(std::filesystem::exists(dir + "/export/layers/" + fn + ".cpe.c")) << fn;
    }
    // An export folder that is not empty is refused.
    EXPECT_THROW(sw_graph::export_model(ex, "net.onnx", dir + "/export"), sw_graph::Error);
    std::filesystem::remove_all(dir);
}

// At batch 1 each slice is a contiguous range of its input: a view at an offset, no layer.
// The concat is fused into the shuffle (fuse_concat_into_shuffle), which reads both halves:
// layers slice, slice, relu, shuffle at batch 2; relu and shuffle at batch 1.
TEST(Executor, ShuffleUnitSliceSplitConcatShuffle) {
    for (const int N : {2, 1})
        for (bool use_split : {false, true}) {
            sw_graph::Graph g = sw_graph_test::shuffle_unit(use_split, N).infer();
            sw_graph::run_passes(g);
            sw_graph::Executor ex(g);
            const int C = 8, P = 3 * 5;
            std::mt19937 rng(11);
            std::uniform_real_distribution<float> d(-1.f, 1.f);
            std::vector<float> x(size_t(N) * C * P);
            for (float &v : x)
                v = d(rng);
            std::vector<float> cat(x.size());
            for (int n = 0; n < N; n++)
                for (int c = 0; c < C; c++)
                    for (int p = 0; p < P; p++) {
                        const float v = x[(size_t(n) * C + c) * P + p];
                        cat[(size_t(n) * C + c) * P + p] = c < C / 2 ? v : std::max(v, 0.f);
                    }
            const sw_graph::ExecResult r = ex.run({{"x", x}});
            expect_close(r.outputs.at("y").f32, reference::channel_shuffle({N, C, 3, 5}, cat, 2),
                         use_split ? "split" : "slice", 0);
            EXPECT_EQ(r.distinct_layers, N == 1 ? 2 : 4);
        }
}

/** x (row major, \p shape) permuted: output dim i is input dim perm[i]. */
std::vector<float> permuted(const std::vector<int64_t> &shape, const std::vector<int64_t> &perm,
                            const std::vector<float> &x) {
    const size_t r = shape.size();
    std::vector<int64_t> stride(r, 1), out_shape(r), idx(r, 0);
    for (size_t d = r - 1; d > 0; d--)
        stride[d - 1] = stride[d] * shape[d];
    for (size_t i = 0; i < r; i++)
        out_shape[i] = shape[size_t(perm[i])];
    std::vector<float> y(x.size());
    for (size_t e = 0; e < y.size(); e++) {
        int64_t src = 0;
        for (size_t i = 0; i < r; i++)
            src += idx[i] * stride[size_t(perm[i])];
        y[e] = x[size_t(src)];
        for (size_t i = r; i-- > 0;) {
            if (++idx[i] < out_shape[i])
                break;
            idx[i] = 0;
        }
    }
    return y;
}

// Swin's patch merging as torch.onnx writes it: x[..., 0::2, 0::2, :], x[..., 1::2, 0::2, :],
// x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :] (each two chained Slices, the first shared) and
// a Concat along the channels, on a (2, 6, 4, 3) NHWC tensor: fuse_space_to_depth makes it one
// transpose (no slice, no concat), and the values are the strided slices' (naive loops).
TEST(Executor, SwinPatchMergingIsOneTranspose) {
    ModelBuilder b;
    const int64_t N = 2, H = 6, W = 4, C = 3;
    b.input("x", {N, H, W, C});
    int k = 0;
    auto slice = [&](const std::string &in, int64_t axis, int64_t begin) {
        const std::string t = "s" + std::to_string(k++);
        b.init_ints(t + "_b", {begin});
        b.init_ints(t + "_e", {1000});
        b.init_ints(t + "_a", {axis});
        b.init_ints(t + "_s", {2});
        b.node("Slice", {in, t + "_b", t + "_e", t + "_a", t + "_s"}, {t});
        return t;
    };
    const std::string h0 = slice("x", 1, 0), h1 = slice("x", 1, 1);
    auto &cat =
        b.node("Concat", {slice(h0, 2, 0), slice(h1, 2, 0), slice(h0, 2, 1), slice(h1, 2, 1)},
               {"y"}, "merge");
    ModelBuilder::attr_i(cat, "axis", -1);
    b.output("y");
    sw_graph::Graph g = b.infer();
    sw_graph::run_passes(g);
    const sw_graph::LoweredGraph lg = sw_graph::lower_graph(g);
    int transposes = 0, others = 0;
    for (const sw_graph::Step &st : lg.steps) {
        if (st.layer >= 0)
            (lg.layers[size_t(st.layer)].generator == "transpose" ? transposes : others)++;
    }
    EXPECT_EQ(transposes, 1);
    EXPECT_EQ(others, 0);
    const std::vector<float> x = random_values(size_t(N * H * W * C), 5);
    sw_graph::Executor ex(g);
    const sw_graph::ExecResult r = ex.run({{"x", x}});
    const sw_graph::Tensor &y = r.outputs.at("y");
    ASSERT_EQ(y.shape, (std::vector<int64_t>{N, H / 2, W / 2, 4 * C}));
    std::vector<float> want;
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H / 2; h++)
            for (int64_t w = 0; w < W / 2; w++)
                for (int64_t part = 0; part < 4; part++)
                    for (int64_t c = 0; c < C; c++) {
                        const int64_t hh = 2 * h + part % 2, ww = 2 * w + part / 2;
                        want.push_back(x[size_t(((n * H + hh) * W + ww) * C + c)]);
                    }
    expect_close(y.f32, want, "patch merging", 0);
}

// Swin's window attention shapes: the qkv split q, k, v = qkv.permute(2, 0, 3, 1, 4)[i] (a
// rank-5 Transpose read by three Gathers: split_transpose_before_gathers), the window
// partition (a rank-6 Transpose that is rank 4 with adjacent dims merged) and the shift
// mask's rank-5 broadcast add (rank 4 with dims that broadcast alike merged), against naive
// loops.
TEST(Executor, SwinRankFiveAndSixTransposesAndBroadcasts) {
    ModelBuilder b;
    const std::vector<int64_t> qkv_shape = {2, 5, 3, 2, 4}, win_shape = {2, 2, 3, 2, 3, 4},
                               att_shape = {2, 3, 2, 4, 4}, mask_shape = {1, 3, 1, 4, 4};
    b.input("qkv", qkv_shape);
    b.input("win", win_shape);
    b.input("att", att_shape);
    const std::vector<float> mask = b.init_random("mask", mask_shape);
    auto &t = b.node("Transpose", {"qkv"}, {"qkv_t"});
    ModelBuilder::attr_ints(t, "perm", {2, 0, 3, 1, 4});
    for (int i = 0; i < 3; i++) {
        const std::string idx = "i" + std::to_string(i);
        auto &c = b.node("Constant", {}, {idx});
        ModelBuilder::attr_i(c, "value_int", i);
        b.node("Gather", {"qkv_t", idx}, {"qkv" + std::to_string(i)});
        b.output("qkv" + std::to_string(i));
    }
    auto &w = b.node("Transpose", {"win"}, {"win_t"});
    ModelBuilder::attr_ints(w, "perm", {0, 1, 3, 2, 4, 5});
    b.output("win_t");
    b.node("Add", {"att", "mask"}, {"att_m"});
    b.output("att_m");
    sw_graph::Graph g = b.infer();
    sw_graph::run_passes(g);
    const std::vector<float> qkv = random_values(2 * 5 * 3 * 2 * 4, 6),
                             win = random_values(2 * 2 * 3 * 2 * 3 * 4, 7),
                             att = random_values(2 * 3 * 2 * 4 * 4, 8);
    sw_graph::Executor ex(g);
    const sw_graph::ExecResult r = ex.run({{"qkv", qkv}, {"win", win}, {"att", att}});
    const std::vector<float> qkv_t = permuted(qkv_shape, {2, 0, 3, 1, 4}, qkv);
    const size_t part = qkv_t.size() / 3;
    for (int i = 0; i < 3; i++) {
        const sw_graph::Tensor &q = r.outputs.at("qkv" + std::to_string(i));
        EXPECT_EQ(q.shape, (std::vector<int64_t>{2, 2, 5, 4}));
        expect_close(q.f32,
                     std::vector<float>(qkv_t.begin() + long(i * part),
                                        qkv_t.begin() + long((i + 1) * part)),
                     "qkv " + std::to_string(i), 0);
    }
    expect_close(r.outputs.at("win_t").f32, permuted(win_shape, {0, 1, 3, 2, 4, 5}, win),
                 "window partition", 0);
    std::vector<float> want(att.size());
    for (size_t e = 0; e < att.size(); e++) {
        const size_t j = e % 16, c = (e / 16 / 2) % 3; // (n, c, h, i, j) -> mask (c, i, j)
        want[e] = att[e] + mask[c * 16 + j];
    }
    expect_close(r.outputs.at("att_m").f32, want, "mask add", 0);
}

// nn.LayerNorm as torch.onnx writes it below opset 17 (ReduceMean, Sub, Pow 2, ReduceMean,
// Add eps, Sqrt, Div, Mul gamma, Add beta), and the same with d * d and without gamma and
// beta: fuse_layer_norm makes one LayerNormalization of each, and the result is naive loops'
// layer norm of the last axis (7 features, 2 x 3 rows).
TEST(Executor, DecomposedLayerNormIsOneLayer) {
    for (const bool affine : {true, false}) {
        ModelBuilder b;
        const int64_t R = 6, C = 7;
        const float eps = 1e-5f;
        b.input("x", {2, 3, C});
        auto &m1 = b.node("ReduceMean", {"x"}, {"mean"});
        ModelBuilder::attr_ints(m1, "axes", {-1});
        b.node("Sub", {"x", "mean"}, {"d"});
        if (affine) {
            b.init("two", {}, {2.f});
            b.node("Pow", {"d", "two"}, {"sq"});
        } else {
            b.node("Mul", {"d", "d"}, {"sq"});
        }
        auto &m2 = b.node("ReduceMean", {"sq"}, {"var"});
        ModelBuilder::attr_ints(m2, "axes", {2});
        b.init("eps", {}, {eps});
        b.node("Add", {"var", "eps"}, {"ve"});
        b.node("Sqrt", {"ve"}, {"sd"});
        b.node("Div", {"d", "sd"}, {affine ? "n" : "y"});
        std::vector<float> gamma(size_t(C), 1.f), beta(size_t(C), 0.f);
        if (affine) {
            gamma = b.init_random("gamma", {C}, 0.5f, 1.5f);
            beta = b.init_random("beta", {C});
            b.node("Mul", {"gamma", "n"}, {"ng"});
            b.node("Add", {"ng", "beta"}, {"y"});
        }
        b.output("y");
        sw_graph::Graph g = b.infer();
        sw_graph::run_passes(g);
        ASSERT_EQ(g.nodes.size(), 1u);
        EXPECT_EQ(g.nodes[0].op_type, "LayerNormalization");
        const std::vector<float> x = random_values(size_t(R * C), 9);
        sw_graph::Executor ex(g);
        const std::vector<float> y = ex.run({{"x", x}}).outputs.at("y").f32;
        std::vector<float> want;
        for (int64_t r = 0; r < R; r++) {
            double mean = 0, var = 0;
            for (int64_t c = 0; c < C; c++)
                mean += x[size_t(r * C + c)] / double(C);
            for (int64_t c = 0; c < C; c++)
                var += std::pow(x[size_t(r * C + c)] - mean, 2) / double(C);
            for (int64_t c = 0; c < C; c++)
                want.push_back(
                    float((x[size_t(r * C + c)] - mean) / std::sqrt(var + eps) * gamma[size_t(c)] +
                          beta[size_t(c)]));
        }
        expect_close(y, want, affine ? "with gamma and beta" : "plain", 1e-5);
    }
}

// ------------------------------------------------------------- (c) errors and the CLI

std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const sw_graph::Error &e) {
        return e.what();
    }
    return "";
}

// A Linear layer on a 3-D input as PyTorch exports it (MatMul by a constant, Add of the bias,
// Relu): one dense step with the bias and the ReLU fused, 2 x 3 rows of 5 features -> 7,
// against naive loops; a MatMul by a computed tensor is refused naming the node.
TEST(Executor, MatMulAddReluIsOneDense) {
    const int B = 2, T = 3, K = 5, N = 7;
    ModelBuilder b;
    b.input("x", {B, T, K});
    const std::vector<float> w = b.init_random("w", {K, N});
    const std::vector<float> bias = b.init_random("bias", {N});
    b.node("MatMul", {"x", "w"}, {"m"}, "linear");
    b.node("Add", {"m", "bias"}, {"a"}, "linear_bias");
    b.node("Relu", {"a"}, {"y"}, "act");
    b.output("y");
    sw_graph::Graph g = b.infer();
    sw_graph::run_passes(g);
    sw_graph::Executor ex(g);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> x(size_t(B) * T * K);
    for (float &v : x)
        v = d(rng);
    const sw_graph::ExecResult r = ex.run({{"x", x}});
    ASSERT_EQ(r.steps.size(), 1u);
    EXPECT_EQ(r.steps[0].op_type, "MatMul+Add+Relu");
    EXPECT_EQ(r.steps[0].generator, "dense");
    std::vector<float> wt(size_t(N) * K); // reference::dense takes (out, in)
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            wt[size_t(j) * K + k] = w[size_t(k) * N + j];
    EXPECT_EQ(r.outputs.at("y").shape, (std::vector<int64_t>{B, T, N}));
    expect_close(r.outputs.at("y").f32, reference::dense(B * T, K, N, x, wt, bias, true), "y");

    ModelBuilder b2;
    // A vector times a computed matrix: no layer (batch_matmul takes matrices).
    b2.input("p", {4});
    b2.input("q", {4, 2});
    b2.node("MatMul", {"p", "q"}, {"z"}, "product");
    b2.output("z");
    const sw_graph::Graph g2 = b2.infer();
    const std::string m = error_of([&] { sw_graph::Executor e2(g2); });
    EXPECT_NE(m.find("product"), std::string::npos) << m;
    EXPECT_NE(m.find("both must have rank >= 2"), std::string::npos) << m;
}

// DenseNet's pre-activation, BN -> Relu -> Conv (3x3, pad 1) and BN -> Conv (1x1, stride 2:
// through the subsample step), batch 2, 7 channels on 9x11: with the prologue fused (one conv2d
// step each) as without (channel_affine then conv2d) against naive loops (the batch norm, the
// ReLU, then the convolution with its zero padding); the fused step's per-layer roofline is the
// sum of the two unfused layers', above its own.
TEST(Executor, BatchNormReluConvFusedAsPrologue) {
    const int N = 2, C = 7, H = 9, W = 11, K = 5;
    ModelBuilder b;
    b.input("x", {N, C, H, W});
    const std::vector<float> g = b.init_random("g", {C}, 0.5f, 1.5f);
    const std::vector<float> be = b.init_random("be", {C}, 0.2f, 1.0f); // positive shifts
    const std::vector<float> m = b.init_random("m", {C});
    const std::vector<float> v = b.init_random("v", {C}, 0.5f, 1.5f);
    const std::vector<float> w = b.init_random("w", {K, C, 3, 3});
    const std::vector<float> bias = b.init_random("bias", {K});
    const std::vector<float> w1 = b.init_random("w1", {K, C, 1, 1});
    const std::vector<float> bias1 = b.init_random("bias1", {K});
    b.node("BatchNormalization", {"x", "g", "be", "m", "v"}, {"bn"}, "bn");
    b.node("Relu", {"bn"}, {"a"}, "relu");
    auto &c = b.node("Conv", {"a", "w", "bias"}, {"y"}, "conv");
    ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
    b.node("BatchNormalization", {"x", "g", "be", "m", "v"}, {"bn_b"}, "bn_b");
    auto &c1 = b.node("Conv", {"bn_b", "w1", "bias1"}, {"y1"}, "conv_1x1");
    ModelBuilder::attr_ints(c1, "strides", {2, 2});
    b.output("y");
    b.output("y1");
    sw_graph::Graph graph = b.infer();
    sw_graph::run_passes(graph);
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> x(size_t(N) * C * H * W);
    for (float &e : x)
        e = d(rng);

    // The naive loops: (x - mean) / sqrt(var + eps) * gamma + beta, the ReLU, the conv.
    std::vector<float> scale(C), shift(C);
    for (int ch = 0; ch < C; ch++) {
        scale[size_t(ch)] = float(g[size_t(ch)] / std::sqrt(double(v[size_t(ch)]) + 1e-5));
        shift[size_t(ch)] = float(be[size_t(ch)] - m[size_t(ch)] * double(scale[size_t(ch)]));
    }
    const reference::Shape4 s4{N, C, H, W};
    const std::vector<float> want =
        reference::conv2d(reference::Conv2DParams::square(N, C, K, H, W, 3, 1, 1, false),
                          reference::channel_affine(s4, x, scale, shift, true), w, bias);
    const std::vector<float> want1 =
        reference::conv2d(reference::Conv2DParams::square(N, C, K, H, W, 1, 2, 0, false),
                          reference::channel_affine(s4, x, scale, shift, false), w1, bias1);

    for (sw_graph::PrologueFusion f :
         {sw_graph::PrologueFusion::Always, sw_graph::PrologueFusion::Never}) {
        const bool fused = f == sw_graph::PrologueFusion::Always;
        sw_graph::ExecOptions o;
        o.fuse_prologue = f;
        sw_graph::Executor ex(graph, o);
        const sw_graph::ExecResult r = ex.run({{"x", x}});
        expect_close(r.outputs.at("y").f32, want, fused ? "y fused" : "y unfused");
        expect_close(r.outputs.at("y1").f32, want1, fused ? "y1 fused" : "y1 unfused");
        std::vector<std::string> kinds;
        for (const sw_graph::StepResult &st : r.steps)
            kinds.push_back(st.op_type);
        if (!fused) {
            EXPECT_EQ(kinds, (std::vector<std::string>{"ChannelScaleShift+Relu", "Conv",
                                                       "ChannelScaleShift", "Subsample", "Conv"}));
            continue;
        }
        EXPECT_EQ(kinds, (std::vector<std::string>{"ChannelScaleShift+Relu+Conv", "Subsample",
                                                   "ChannelScaleShift+Conv"}));
        const sw_net::LayerRecord &rec = r.steps[0].record;
        ASSERT_EQ(rec.unfused.size(), 2u);
        const sw::Machine &mach = sw::sw26010();
        const double own =
            sw::roofline(rec.gflop, double(rec.read_bytes), double(rec.write_bytes), 0, mach)
                .bound_seconds;
        double parts = 0;
        for (const sw_net::LayerRecord::Part &p : rec.unfused)
            parts += sw::roofline(p.gflop, double(p.read_bytes), double(p.write_bytes), 0, mach)
                         .bound_seconds;
        EXPECT_DOUBLE_EQ(sw_net::layer_roofline(rec, mach).bound_seconds, parts);
        EXPECT_GT(parts, own); // the affine's output written and read again
        // The unfused affine reads x, scale and shift and writes its output; the conv reads
        // it, the weights and the bias.
        EXPECT_EQ(rec.unfused[0].read_bytes, 4 * (int64_t(N) * C * H * W + 2 * C));
        EXPECT_EQ(rec.unfused[1].read_bytes, 4 * (int64_t(N) * C * H * W + K * C * 9 + K));
        EXPECT_EQ(rec.read_bytes, 4 * (int64_t(N) * C * H * W + K * C * 9 + K + 2 * C));
    }

    // Auto: the autoscheduler's predictions decide each of the two candidates (the executor's
    // own coster), and the result is the same either way.
    sw_graph::Executor ex(graph, sw_graph::ExecOptions{});
    const std::vector<sw_graph::PrologueChoice> &choices = ex.lowered().prologue_choices;
    ASSERT_EQ(choices.size(), 2u);
    const sw_graph::ExecResult r = ex.run({{"x", x}});
    expect_close(r.outputs.at("y").f32, want, "y auto");
    expect_close(r.outputs.at("y1").f32, want1, "y1 auto");
    std::vector<std::string> kinds;
    for (const sw_graph::StepResult &st : r.steps)
        kinds.push_back(st.op_type);
    for (const sw_graph::PrologueChoice &c : choices) {
        EXPECT_TRUE(c.costed) << c.conv;
        EXPECT_GT(c.fused_seconds, 0) << c.conv;
        EXPECT_EQ(c.fuse, c.fused_seconds < c.affine_seconds + c.conv_seconds) << c.conv;
        const bool relu = c.affine.find("bn_b") == std::string::npos;
        const std::string fused_kind =
            relu ? "ChannelScaleShift+Relu+Conv" : "ChannelScaleShift+Conv";
        EXPECT_EQ(std::count(kinds.begin(), kinds.end(), fused_kind), c.fuse ? 1 : 0) << c.conv;
        // The layers of the chosen form were built with the plans their estimates chose (not
        // searched again), and carry the predictions that decided.
        std::vector<std::pair<const sw_graph::LayerSpec *, double>> chosen;
        if (c.fuse)
            chosen = {{&c.fused, c.fused_seconds}};
        else
            chosen = {{&c.unfused_affine, c.affine_seconds}, {&c.unfused_conv, c.conv_seconds}};
        for (const auto &[spec, seconds] : chosen) {
            int found = 0;
            for (size_t i = 0; i < ex.lowered().layers.size(); i++) {
                if (ex.lowered().layers[i].key() != spec->key())
                    continue;
                found++;
                const sw_graph::LayerBuildInfo &info = ex.builds()[i];
                EXPECT_EQ(info.schedule, "auto");
                EXPECT_NEAR(info.predicted_seconds, seconds, 1e-12) << spec->key();
                std::ifstream h(ex.layer_directory(int(i)) + "/" + ex.layer_function(int(i)) +
                                ".schedule.h");
                const std::string text((std::istreambuf_iterator<char>(h)),
                                       std::istreambuf_iterator<char>());
                EXPECT_NE(text.find("(1 plans costed"), std::string::npos) << text.substr(0, 600);
            }
            EXPECT_EQ(found, 1) << spec->key();
        }
    }
}

// The executor's prologue costs: ExecOptions::prologue_coster decides, and the executor
// keeps it (Executor::prologue_coster, for a second executor of the same graph).
TEST(Executor, PrologueCosterOfTheOptionsDecides) {
    const int N = 1, C = 4, H = 5, W = 6, K = 3;
    ModelBuilder b;
    b.input("x", {N, C, H, W});
    const std::vector<float> g = b.init_random("g", {C}, 0.5f, 1.5f);
    const std::vector<float> be = b.init_random("be", {C});
    const std::vector<float> m = b.init_random("m", {C});
    const std::vector<float> v = b.init_random("v", {C}, 0.5f, 1.5f);
    const std::vector<float> w = b.init_random("w", {K, C, 3, 3});
    const std::vector<float> bias = b.init_random("bias", {K});
    b.node("BatchNormalization", {"x", "g", "be", "m", "v"}, {"bn"}, "bn");
    b.node("Relu", {"bn"}, {"a"}, "relu");
    auto &c = b.node("Conv", {"a", "w", "bias"}, {"y"}, "conv");
    ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
    b.output("y");
    sw_graph::Graph graph = b.infer();
    sw_graph::run_passes(graph);
    std::vector<float> x(size_t(N) * C * H * W);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    for (float &e : x)
        e = d(rng);
    std::vector<float> scale(C), shift(C);
    for (int ch = 0; ch < C; ch++) {
        scale[size_t(ch)] = float(g[size_t(ch)] / std::sqrt(double(v[size_t(ch)]) + 1e-5));
        shift[size_t(ch)] = float(be[size_t(ch)] - m[size_t(ch)] * double(scale[size_t(ch)]));
    }
    const std::vector<float> want =
        reference::conv2d(reference::Conv2DParams::square(N, C, K, H, W, 3, 1, 1, false),
                          reference::channel_affine({N, C, H, W}, x, scale, shift, true), w, bias);
    for (bool prefer_fused : {true, false}) {
        int calls = 0;
        sw_graph::ExecOptions o;
        o.schedule = "hand";
        o.prologue_coster = [&](const std::vector<sw_graph::LayerSpec> &layers) {
            calls++;
            std::vector<double> r;
            for (const sw_graph::LayerSpec &l : layers)
                r.push_back(l.params.count("prologue") ? (prefer_fused ? 1e-4 : 1e-2) : 1e-3);
            return r;
        };
        sw_graph::Executor ex(graph, o);
        EXPECT_EQ(calls, 1);
        const sw_graph::ExecResult r = ex.run({{"x", x}});
        expect_close(r.outputs.at("y").f32, want, prefer_fused ? "fused" : "unfused");
        ASSERT_EQ(r.steps.size(), prefer_fused ? 1u : 2u);
        EXPECT_EQ(r.steps.back().op_type, prefer_fused ? "ChannelScaleShift+Relu+Conv" : "Conv");
        // A second executor given this one's coster lowers the same steps.
        sw_graph::ExecOptions o2;
        o2.schedule = "baseline";
        o2.prologue_coster = ex.prologue_coster();
        sw_graph::Executor ex2(graph, o2);
        EXPECT_EQ(calls, 2);
        EXPECT_EQ(ex2.lowered().steps.size(), ex.lowered().steps.size());
    }
}

// The autoscheduler's estimate of a layer (autoscheduler_coster, jit_estimate_layer: the
// generator stops once the autoscheduler has chosen) is the prediction the layer's build gets
// from the same autoscheduler; repeated layers are estimated once, and a second coster reads
// the estimates kept in the cache directory.
TEST(Executor, AutoschedulerCosterPredictsWhatTheBuildGets) {
    ModelBuilder b;
    b.input("x", {1, 24, 14, 14});
    b.init_random("w", {16, 24, 1, 1});
    b.node("Conv", {"x", "w"}, {"y"}, "conv");
    b.output("y");
    const sw_graph::Graph g = b.infer();
    const std::string dir = ::testing::TempDir() + "/sw_exec_estimates";
    std::filesystem::remove_all(dir);
    sw_graph::ExecOptions o;
    o.cache_dir = dir;
    sw_graph::Executor ex(g, o);
    ASSERT_EQ(ex.builds().size(), 1u);
    ASSERT_EQ(ex.builds()[0].schedule, "auto");
    const double built = ex.builds()[0].predicted_seconds;
    ASSERT_GT(built, 0);
    const sw_graph::LayerSpec &conv = ex.lowered().layers[0];
    sw_graph::LayerSpec affine{
        "channel_affine",
        {{"batch", "1"}, {"channels", "24"}, {"height", "1"}, {"width", "196"}, {"relu", "true"}}};
    sw_graph::LayerSpec bad{"conv2d", {{"in_channels", "0"}}}; // the generator refuses it
    const sw_graph::LayerCoster coster = sw_graph::autoscheduler_coster(o);
    const std::vector<double> s = coster({conv, affine, conv, bad});
    ASSERT_EQ(s.size(), 4u);
    EXPECT_DOUBLE_EQ(s[0], built);
    EXPECT_GT(s[1], 0);
    EXPECT_DOUBLE_EQ(s[2], built);
    EXPECT_EQ(s[3], 0.0); // unknown
    size_t kept = 0;
    for (const auto &e : std::filesystem::directory_iterator(dir + "/estimates"))
        kept += e.path().extension() == ".txt";
    EXPECT_EQ(kept, 2u); // conv and affine; no failed estimate
    // A new coster (no estimate in memory) reads them from disk: the conv's entry, changed
    // here to 0.125 s, gives 0.125.
    int changed = 0;
    for (const auto &e : std::filesystem::directory_iterator(dir + "/estimates")) {
        if (e.path().filename().string().rfind("conv2d-", 0) != 0)
            continue;
        std::ifstream in(e.path());
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        in.close();
        const size_t at = text.find("\npredicted ");
        ASSERT_NE(at, std::string::npos) << text;
        text = text.substr(0, at) + "\npredicted 0.125" + text.substr(text.find('\n', at + 1));
        std::ofstream(e.path()) << text;
        changed++;
    }
    ASSERT_EQ(changed, 1);
    const std::vector<double> again = sw_graph::autoscheduler_coster(o)({affine, conv});
    EXPECT_DOUBLE_EQ(again[0], s[1]);
    EXPECT_DOUBLE_EQ(again[1], 0.125);
    std::filesystem::remove_all(dir);

    // The generator with -e schedule alone writes the schedule and nothing else (the module
    // is not lowered: no C sources, no header, no report).
    {
        const std::string out = ::testing::TempDir() + "/sw_exec_schedule_only";
        std::filesystem::remove_all(out);
        std::filesystem::create_directories(out);
        std::vector<std::string> argv = {sw::find_tool(sw::kLayersGenerator),
                                         "-g",
                                         conv.generator,
                                         "-f",
                                         "only",
                                         "-o",
                                         out,
                                         "-e",
                                         "schedule",
                                         "-p",
                                         sw::find_tool(sw::kAutoschedulePlugin),
                                         "-s",
                                         "Sunway",
                                         "auto_schedule=true",
                                         "target=sw26010"};
        for (const auto &kv : conv.params)
            argv.push_back(kv.first + "=" + kv.second);
        std::string log;
        ASSERT_EQ(sw_jit::run_command(argv, &log), 0) << log;
        std::vector<std::string> files;
        for (const auto &f : std::filesystem::directory_iterator(out))
            files.push_back(f.path().filename().string());
        EXPECT_EQ(files, std::vector<std::string>{"only.schedule.h"});
        const sw_jit::LayerSchedule only = sw_jit::read_schedule_header(out + "/only.schedule.h");
        EXPECT_EQ(only.plan, ex.builds()[0].plan);
        EXPECT_DOUBLE_EQ(only.predicted_seconds, built);
        std::filesystem::remove_all(out);
    }

    // The plan of the estimate, given to a build ($SW_AUTOSCHEDULE_PLAN), is applied without
    // the search: the same plan and prediction, one plan costed. A plan the layer does not
    // have: the whole search, the same choice.
    const std::string gen = sw::find_tool(sw::kLayersGenerator);
    sw_jit::JitOptions jo;
    jo.extra_args = {"-p", sw::find_tool(sw::kAutoschedulePlugin), "-s", "Sunway",
                     "auto_schedule=true"};
    const sw_jit::JitEstimate e = sw_jit::jit_estimate_layer(gen, conv.generator, conv.params, jo);
    ASSERT_TRUE(e.ok) << e.log;
    EXPECT_FALSE(e.from_cache);
    EXPECT_EQ(e.schedule.plan, ex.builds()[0].plan);
    EXPECT_DOUBLE_EQ(e.schedule.predicted_seconds, built);
    jo.emit += ",schedule";
    for (const std::string &plan : {e.schedule.plan, std::string("tile 1x2x3, no such plan")}) {
        sw_jit::JitOptions hinted = jo;
        hinted.env["SW_AUTOSCHEDULE_PLAN"] = plan;
        const sw_jit::JitBuild h =
            sw_jit::jit_build_layer(gen, conv.generator, conv.params, hinted);
        ASSERT_TRUE(h.ok()) << h.log;
        const sw_jit::LayerSchedule hs = sw_jit::read_layer_schedule(*h.layer);
        EXPECT_EQ(hs.plan, e.schedule.plan) << plan;
        EXPECT_DOUBLE_EQ(hs.predicted_seconds, built) << plan;
        std::ifstream header(h.layer->dir() + "/" + h.layer->function_name() + ".schedule.h");
        const std::string text((std::istreambuf_iterator<char>(header)),
                               std::istreambuf_iterator<char>());
        const bool searched = text.find("(1 plans costed") == std::string::npos;
        EXPECT_EQ(searched, plan != e.schedule.plan) << text.substr(0, 600);
    }
}

TEST(ExecutorErrors, UnsupportedOperatorNamesTheNode) {
    ModelBuilder b;
    b.input("x", {2, 4, 2, 3, 5});
    b.node("Relu", {"x"}, {"r"}, "relu0");
    auto &t = b.node("Transpose", {"r"}, {"y"}, "swap_hw");
    ModelBuilder::attr_ints(t, "perm", {4, 2, 0, 3, 1}); // rank 5 even once reduced
    b.output("y");
    const sw_graph::Graph g = b.infer();
    const std::string m = error_of([&] { sw_graph::Executor ex(g); });
    EXPECT_NE(m.find("error: "), std::string::npos) << m;
    EXPECT_NE(m.find("swap_hw"), std::string::npos) << m;
    EXPECT_NE(m.find("Transpose"), std::string::npos) << m;
}

TEST(ExecutorErrors, GemmWithVariableBNotTransposed) {
    const std::string dir =
        std::string(SW_ONNX_TEST_DATA) + "/node/test_gemm_default_single_elem_vector_bias";
    if (!exists(dir + "/model.onnx"))
        GTEST_SKIP() << dir << " not found";
    const sw_graph::Graph g = sw_graph::import_onnx(dir + "/model.onnx");
    const std::string m = error_of([&] { sw_graph::Executor ex(g); });
    EXPECT_NE(m.find("Gemm"), std::string::npos) << m;
    EXPECT_NE(m.find("transB=0"), std::string::npos) << m;
}

TEST(ExecutorErrors, WrongInputSize) {
    ModelBuilder b;
    b.input("x", {2, 3});
    b.node("Relu", {"x"}, {"y"}, "r");
    b.output("y");
    const sw_graph::Graph g = b.infer();
    sw_graph::Executor ex(g);
    std::string m = error_of([&] { ex.run({{"x", std::vector<float>(5)}}); });
    EXPECT_NE(m.find("'x'"), std::string::npos) << m;
    m = error_of([&] { ex.run(sw_graph::InputValues{}); });
    EXPECT_NE(m.find("data for graph input 'x'"), std::string::npos) << m;
    const auto r = ex.run({{"x", {-1, 2, -3, 4, -5, 6}}});
    EXPECT_EQ(r.outputs.at("y").f32, (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

} // namespace

// An embedding: int64 ids (negative ones count from the end) through gather, against the table
// rows picked here; an id past the table is an error naming the node and the id.
TEST(Executor, EmbeddingOfInt64Ids) {
    ModelBuilder b;
    b.input("ids", {2, 3}, onnx::TensorProto_DataType_INT64);
    const std::vector<float> table = b.init_random("table", {7, 5});
    b.node("Gather", {"table", "ids"}, {"y"}, "embed");
    b.output("y");
    const sw_graph::Graph g = b.infer();
    sw_graph::Executor ex(g);
    sw_graph::InputValues in;
    in.i64["ids"] = {0, 6, -1, 3, -7, 2};
    const sw_graph::ExecResult r = ex.run(in);
    const sw_graph::Tensor &y = r.outputs.at("y");
    ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 3, 5}));
    for (size_t i = 0; i < 6; i++) {
        const int64_t id = in.i64["ids"][i] < 0 ? in.i64["ids"][i] + 7 : in.i64["ids"][i];
        for (size_t d = 0; d < 5; d++)
            EXPECT_EQ(y.f32[i * 5 + d], table[size_t(id) * 5 + d]) << i << "," << d;
    }
    in.i64["ids"][4] = 7;
    const std::string m = error_of([&] { ex.run(in); });
    EXPECT_NE(m.find("node 'embed' (Gather)"), std::string::npos) << m;
    EXPECT_NE(m.find("index 7 (element 4 of 'ids') is out of range for a table of 7 rows"),
              std::string::npos)
        << m;
}
