/** \file
 * The graph passes. BN folding is checked numerically: a naive conv followed by a naive
 * batch norm (plain loops, written here) against the folded conv, on random data.
 */
#include "graph/tests/model_builder.h"

#include "graph/Passes.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace sw_graph;
using sw_graph_test::ModelBuilder;
using Dims = std::vector<int64_t>;

namespace {

struct ConvParams {
    int64_t stride = 1, pad = 0, groups = 1;
};

/** Naive NCHW convolution, square stride and pad. */
std::vector<float> conv(const std::vector<float> &x, const Dims &xs, const std::vector<float> &w,
                        const Dims &ws, const std::vector<float> *b, ConvParams p, Dims &ys) {
    const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3];
    const int64_t m = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
    const int64_t oh = (h + 2 * p.pad - kh) / p.stride + 1,
                  ow = (wd + 2 * p.pad - kw) / p.stride + 1;
    ys = {n, m, oh, ow};
    std::vector<float> y(n * m * oh * ow);
    for (int64_t in = 0; in < n; in++)
        for (int64_t om = 0; om < m; om++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double acc = b ? (*b)[om] : 0.0;
                    const int64_t g = om / (m / p.groups);
                    for (int64_t ic = 0; ic < cg; ic++)
                        for (int64_t ky = 0; ky < kh; ky++)
                            for (int64_t kx = 0; kx < kw; kx++) {
                                const int64_t iy = oy * p.stride - p.pad + ky,
                                              ix = ox * p.stride - p.pad + kx;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
                                    continue;
                                const int64_t ch = g * cg + ic;
                                acc += (double)x[((in * c + ch) * h + iy) * wd + ix] *
                                       w[((om * cg + ic) * kh + ky) * kw + kx];
                            }
                    y[((in * m + om) * oh + oy) * ow + ox] = (float)acc;
                }
    return y;
}

/** Naive inference batch norm over NCHW. */
std::vector<float> batch_norm(std::vector<float> y, const Dims &ys, const std::vector<float> &gamma,
                              const std::vector<float> &beta, const std::vector<float> &mean,
                              const std::vector<float> &var, float eps) {
    const int64_t plane = ys[2] * ys[3];
    for (int64_t i = 0; i < (int64_t)y.size(); i++) {
        const int64_t c = (i / plane) % ys[1];
        y[i] = (float)((y[i] - mean[c]) / std::sqrt((double)var[c] + eps) * gamma[c] + beta[c]);
    }
    return y;
}

std::vector<float> random_vector(size_t n, std::mt19937 &rng) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float &x : v)
        x = d(rng);
    return v;
}

void expect_near(const std::vector<float> &a, const std::vector<float> &b) {
    ASSERT_EQ(a.size(), b.size());
    int bad = 0;
    for (size_t i = 0; i < a.size(); i++) {
        if (std::fabs(a[i] - b[i]) > 1e-4f + 1e-4f * std::fabs(b[i]) && bad++ < 5) {
            ADD_FAILURE() << "element " << i << ": " << a[i] << " vs " << b[i];
        }
    }
    EXPECT_EQ(bad, 0);
}

struct BnCase {
    bool bias;
    int64_t groups;
};

class GraphPassesBnFold : public ::testing::TestWithParam<BnCase> {};

} // namespace

TEST_P(GraphPassesBnFold, FoldedConvMatchesConvThenBn) {
    const BnCase k = GetParam();
    const Dims xs{2, 6, 9, 7}, ws{8, 6 / k.groups, 3, 3};
    const float eps = 1e-3f;
    ModelBuilder m;
    m.input("x", xs);
    const auto w = m.init_random("w", ws);
    std::vector<float> b;
    if (k.bias)
        b = m.init_random("b", {8});
    auto &c = m.node("Conv", {"x", "w", k.bias ? "b" : ""}, {"c"}, "conv");
    ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
    ModelBuilder::attr_ints(c, "strides", {2, 2});
    ModelBuilder::attr_i(c, "group", k.groups);
    const auto gamma = m.init_random("gamma", {8});
    const auto beta = m.init_random("beta", {8});
    const auto mean = m.init_random("mean", {8});
    const auto var = m.init_random("var", {8}, 0.1f, 3.0f);
    auto &bn = m.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"}, "bn");
    ModelBuilder::attr_f(bn, "epsilon", eps);
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(fold_batch_norm(g), 1);
    ASSERT_EQ(g.nodes.size(), 1u);
    const Node &conv_node = g.nodes[0];
    EXPECT_EQ(conv_node.op_type, "Conv");
    EXPECT_EQ(conv_node.output(0), "y");
    EXPECT_EQ(g.find("gamma"), nullptr); // BN parameters dropped
    const Tensor &fw = g.tensor(conv_node.input(1));
    const Tensor &fb = g.tensor(conv_node.input(2));
    EXPECT_EQ(fw.shape, ws);
    EXPECT_EQ(fb.shape, (Dims{8}));

    std::mt19937 rng(7);
    const auto x = random_vector(2 * 6 * 9 * 7, rng);
    Dims ys, ys2;
    const ConvParams p{2, 1, k.groups};
    const auto expected = batch_norm(conv(x, xs, w, ws, k.bias ? &b : nullptr, p, ys), ys, gamma,
                                     beta, mean, var, eps);
    const auto actual = conv(x, xs, fw.f32, fw.shape, &fb.f32, p, ys2);
    EXPECT_EQ(ys, g.tensor("y").shape);
    expect_near(actual, expected);
}

INSTANTIATE_TEST_SUITE_P(GraphBn, GraphPassesBnFold,
                         ::testing::Values(BnCase{true, 1}, BnCase{false, 1}, BnCase{true, 2}),
                         [](const auto &info) {
                             return std::string(info.param.bias ? "bias" : "no_bias") + "_groups" +
                                    std::to_string(info.param.groups);
                         });

TEST(GraphPasses, SharedWeightsAreCopiedNotChanged) {
    ModelBuilder m;
    m.input("x", {1, 2, 4, 4});
    const auto w = m.init_random("w", {2, 2, 1, 1});
    m.node("Conv", {"x", "w"}, {"c1"});
    m.node("Conv", {"x", "w"}, {"c2"});
    for (const char *p : {"g", "b", "mu"})
        m.init_random(p, {2});
    m.init_random("v", {2}, 0.5f, 1.0f);
    m.node("BatchNormalization", {"c1", "g", "b", "mu", "v"}, {"y1"});
    m.node("Add", {"y1", "c2"}, {"y"});
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(fold_batch_norm(g), 1);
    EXPECT_EQ(g.tensor("w").f32, w); // the second conv still reads the original weights
    EXPECT_NE(g.nodes[0].input(1), g.nodes[1].input(1));
}

TEST(GraphPasses, BnAfterSharedConvOutputBecomesScaleShift) {
    // The conv's output has a second reader: the BN stays a per-channel scale and shift.
    ModelBuilder m;
    m.input("x", {1, 3, 5, 5});
    m.init_random("w", {3, 3, 3, 3});
    auto &c = m.node("Conv", {"x", "w"}, {"c"});
    ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
    const auto gamma = m.init_random("gamma", {3});
    const auto beta = m.init_random("beta", {3});
    const auto mean = m.init_random("mean", {3});
    const auto var = m.init_random("var", {3}, 0.1f, 2.0f);
    m.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, "bn");
    m.node("Add", {"bn", "c"}, {"y"});
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(fold_batch_norm(g), 1);
    ASSERT_EQ(g.nodes.size(), 3u);
    const Node &ss = g.nodes[1];
    EXPECT_EQ(ss.op_type, "ChannelScaleShift");
    EXPECT_EQ(ss.domain, kInternalDomain);
    EXPECT_EQ(ss.label(), "node 'bn' (ChannelScaleShift)");
    const Tensor &scale = g.tensor(ss.input(1)), &shift = g.tensor(ss.input(2));
    std::mt19937 rng(3);
    const auto x = random_vector(3 * 25, rng);
    const Dims xs{1, 3, 5, 5};
    const auto expected = batch_norm(x, xs, gamma, beta, mean, var, 1e-5f);
    std::vector<float> actual(x.size());
    for (size_t i = 0; i < x.size(); i++)
        actual[i] = x[i] * scale.f32[i / 25] + shift.f32[i / 25];
    expect_near(actual, expected);
    // Shape inference accepts the internal operator.
    infer_shapes(g);
    EXPECT_EQ(g.tensor("y").shape, xs);
}

TEST(GraphPasses, IdentityBeforeGraphOutputRenamesProducer) {
    ModelBuilder m;
    m.input("x", {1, 4});
    m.node("Relu", {"x"}, {"r"});
    m.node("Identity", {"r"}, {"y"});
    m.node("Sigmoid", {"r"}, {"z"});
    m.output("y");
    m.output("z");
    Graph g = m.infer();
    EXPECT_EQ(remove_identities(g), 1);
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].output(0), "y");
    EXPECT_EQ(g.nodes[1].input(0), "y");
    EXPECT_EQ(g.outputs, (std::vector<std::string>{"y", "z"}));
    EXPECT_EQ(g.find("r"), nullptr);
}

TEST(GraphPasses, IdentityOfGraphInputToOutputIsKept) {
    ModelBuilder m;
    m.input("x", {1, 4});
    m.node("Identity", {"x"}, {"y"});
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(remove_identities(g), 0);
    EXPECT_EQ(g.nodes.size(), 1u);
}

TEST(GraphPasses, DeadNodesAndTheirWeightsGo) {
    ModelBuilder m;
    m.input("x", {1, 3, 4, 4});
    m.init_random("w", {4, 3, 1, 1});
    m.node("Conv", {"x", "w"}, {"unused"});
    m.node("Relu", {"unused"}, {"unused2"});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(eliminate_dead_nodes(g), 2);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.find("w"), nullptr);
    EXPECT_EQ(g.find("unused"), nullptr);
    EXPECT_NE(g.find("x"), nullptr);
}

// PyTorch's exact GELU in both of torch.onnx's orders, and its tanh approximation, become one
// Gelu node each; one whose
// intermediate has a second reader, or whose constant is not sqrt(2), is left alone.
TEST(Passes, FuseGelu) {
    ModelBuilder m(17);
    m.input("x", {2, 6});
    m.init("sqrt2", {}, {1.41421356f});
    m.init("rsqrt2", {}, {0.70710678f});
    m.init("one", {}, {1.f});
    m.init("half", {}, {0.5f});
    m.init("three", {}, {3.f});
    // x * (1 + erf(x / sqrt 2)) * 0.5
    m.node("Div", {"x", "sqrt2"}, {"d"});
    m.node("Erf", {"d"}, {"e"});
    m.node("Add", {"e", "one"}, {"a"});
    m.node("Mul", {"x", "a"}, {"m"});
    m.node("Mul", {"m", "half"}, {"g1"}, "gelu1");
    // (0.5 * g1) * (1 + erf(g1 * (1 / sqrt 2)))
    m.node("Mul", {"g1", "rsqrt2"}, {"d2"});
    m.node("Erf", {"d2"}, {"e2"});
    m.node("Add", {"one", "e2"}, {"a2"});
    m.node("Mul", {"half", "g1"}, {"h2"});
    m.node("Mul", {"h2", "a2"}, {"g2"}, "gelu2");
    // The tanh approximation: 0.5 * (g2 * (1 + tanh(sqrt(2 / pi) * (g2 + 0.044715 g2^3)))).
    m.init("c", {}, {0.044715f});
    m.init("k", {}, {0.7978845608f});
    m.node("Mul", {"g2", "g2"}, {"sq"});
    m.node("Mul", {"g2", "sq"}, {"cube"});
    m.node("Mul", {"c", "cube"}, {"cc"});
    m.node("Add", {"g2", "cc"}, {"inner"});
    m.node("Mul", {"k", "inner"}, {"arg"});
    m.node("Tanh", {"arg"}, {"t"});
    m.node("Add", {"one", "t"}, {"t1"});
    m.node("Mul", {"g2", "t1"}, {"gt"});
    m.node("Mul", {"half", "gt"}, {"g3"}, "gelu3");
    // Not GELU: divided by 3.
    m.node("Div", {"g3", "three"}, {"d3"});
    m.node("Erf", {"d3"}, {"e3"});
    m.node("Add", {"e3", "one"}, {"a3"});
    m.node("Mul", {"g3", "a3"}, {"m3"});
    m.node("Mul", {"m3", "half"}, {"y"});
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(fuse_gelu(g), 3);
    int gelus = 0, erfs = 0, tanh = 0;
    for (const Node &n : g.nodes) {
        gelus += n.op_type == "Gelu" && n.domain == kInternalDomain;
        erfs += n.op_type == "Erf";
        tanh += n.op_type == "Gelu" && n.attr_string("approximate", "") == "tanh";
    }
    EXPECT_EQ(gelus, 3);
    EXPECT_EQ(erfs, 1);
    EXPECT_EQ(tanh, 1);
    EXPECT_EQ(g.nodes[0].op_type, "Gelu");
    EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x"});
    EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"g1"});
    EXPECT_EQ(g.nodes[0].attr_string("approximate", ""), "none");
}

namespace {

/** x zero-padded by `p` on both spatial sides (naive loops). */
std::vector<float> zero_pad(const std::vector<float> &x, const Dims &xs, int64_t p, Dims &ys) {
    const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3];
    ys = {n, c, h + 2 * p, w + 2 * p};
    std::vector<float> y(n * c * ys[2] * ys[3], 0.f);
    for (int64_t i = 0; i < n * c; i++)
        for (int64_t r = 0; r < h; r++)
            for (int64_t q = 0; q < w; q++)
                y[(i * ys[2] + r + p) * ys[3] + q + p] = x[(i * h + r) * w + q];
    return y;
}

} // namespace

// torch's F.avg_pool2d(x, 3, 1, padding=1) as torch.onnx exports it (Inception-v3): Pad then
// AveragePool; a Pad before a Conv adds to the conv's pads, checked against the naive conv of
// the padded input.
TEST(GraphPasses, ZeroPadFoldsIntoAveragePoolAndConv) {
    ModelBuilder m(17);
    const Dims xs{2, 3, 7, 6}, ws{4, 3, 3, 3};
    m.input("x", xs);
    m.init_ints("p1", {0, 0, 1, 1, 0, 0, 1, 1});
    m.init("zero", {}, {0.f});
    m.node("Pad", {"x", "p1", "zero"}, {"xp"}, "pad1");
    auto &ap = m.node("AveragePool", {"xp"}, {"a"}, "avg");
    ModelBuilder::attr_ints(ap, "kernel_shape", {3, 3});
    const auto w = m.init_random("w", ws);
    m.init_ints("p2", {0, 0, 1, 1, 0, 0, 1, 1});
    m.node("Pad", {"x", "p2"}, {"xq"}, "pad2"); // constant_value absent: 0
    auto &c = m.node("Conv", {"xq", "w"}, {"c"}, "conv");
    ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
    m.output("a");
    m.output("c");
    Graph g = m.infer();
    EXPECT_EQ(fold_pad_into_window(g), 2);
    ASSERT_EQ(g.nodes.size(), 2u);
    const Node &pool = g.nodes[0], &conv_node = g.nodes[1];
    EXPECT_EQ(pool.op_type, "AveragePool");
    EXPECT_EQ(pool.input(0), "x");
    EXPECT_EQ(pool.attr_ints("pads", {}), (Dims{1, 1, 1, 1}));
    EXPECT_EQ(pool.attr_int("count_include_pad", 0), 1);
    EXPECT_EQ(conv_node.input(0), "x");
    EXPECT_EQ(conv_node.attr_ints("pads", {}), (Dims{2, 2, 2, 2}));
    EXPECT_EQ(g.find("xp"), nullptr);
    infer_shapes(g);
    EXPECT_EQ(g.tensor("a").shape, (Dims{2, 3, 7, 6}));
    EXPECT_EQ(g.tensor("c").shape, (Dims{2, 4, 9, 8}));

    std::mt19937 rng(5);
    const auto x = random_vector(2 * 3 * 7 * 6, rng);
    Dims ps, ys, ys2;
    const auto padded = zero_pad(x, xs, 1, ps);
    const auto expected = conv(padded, ps, w, ws, nullptr, ConvParams{1, 1, 1}, ys);
    const auto actual = conv(x, xs, w, ws, nullptr, ConvParams{1, 2, 1}, ys2);
    EXPECT_EQ(ys, g.tensor("c").shape);
    expect_near(actual, expected);
}

// Pads the window cannot take are left: a value other than 0, reflect, the channel axis, a
// second reader, a MaxPool, and an AveragePool that excludes its own pads from the count.
TEST(GraphPasses, PadsThatAreNotZeroWindowPadsStay) {
    ModelBuilder m(17);
    m.input("x", {1, 2, 5, 5});
    m.init_ints("sp", {0, 0, 1, 1, 0, 0, 1, 1});
    m.init_ints("ch", {0, 1, 0, 0, 0, 1, 0, 0});
    m.init("one", {}, {1.f});
    m.node("Pad", {"x", "sp", "one"}, {"v"}, "value_one");
    auto &reflect = m.node("Pad", {"x", "sp"}, {"r"}, "reflect");
    ModelBuilder::attr_s(reflect, "mode", "reflect");
    m.node("Pad", {"x", "ch"}, {"c"}, "channels");
    m.node("Pad", {"x", "sp"}, {"s"}, "shared");
    m.node("Pad", {"x", "sp"}, {"mp"}, "max");
    m.node("Pad", {"x", "sp"}, {"ex"}, "exclude");
    int k = 0;
    for (const char *t : {"v", "r", "c", "s", "s"}) {
        auto &p = m.node("AveragePool", {t}, {"y" + std::to_string(k)});
        ModelBuilder::attr_ints(p, "kernel_shape", {3, 3});
        m.output("y" + std::to_string(k++));
    }
    auto &mp = m.node("MaxPool", {"mp"}, {"y5"});
    ModelBuilder::attr_ints(mp, "kernel_shape", {3, 3});
    auto &ex = m.node("AveragePool", {"ex"}, {"y6"});
    ModelBuilder::attr_ints(ex, "kernel_shape", {3, 3});
    ModelBuilder::attr_ints(ex, "pads", {1, 1, 1, 1});
    m.output("y5");
    m.output("y6");
    Graph g = m.infer();
    const size_t before = g.nodes.size();
    EXPECT_EQ(fold_pad_into_window(g), 0);
    EXPECT_EQ(g.nodes.size(), before);
}
