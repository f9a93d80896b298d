/** \file
 * Lowering (graph/Lowering.h) without running anything: which generator and parameters each
 * node gets, the fused Relu, views, distinct layers listed once, and the errors naming the
 * node.
 */
#include "graph/Import.h"
#include "graph/Lowering.h"
#include "graph/Passes.h"
#include "graph/tests/model_builder.h"

#include <gtest/gtest.h>

using sw_graph::LoweredGraph;
using sw_graph_test::ModelBuilder;

namespace {

LoweredGraph lower(const ModelBuilder &b) {
    sw_graph::Graph g = b.infer();
    sw_graph::run_passes(g);
    return sw_graph::lower_graph(g);
}

TEST(Lowering, ConvReluFusedAndAsymmetricPads) {
    ModelBuilder b;
    b.input("x", {1, 3, 9, 7});
    b.init_random("w", {6, 3, 3, 2});
    b.init_random("bias", {6});
    auto &c = b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv1");
    ModelBuilder::attr_ints(c, "pads", {1, 0, 2, 1});
    ModelBuilder::attr_ints(c, "strides", {2, 1});
    b.node("Relu", {"c"}, {"y"}, "relu1");
    b.output("y");
    const LoweredGraph l = lower(b);
    ASSERT_EQ(l.steps.size(), 1u);
    ASSERT_EQ(l.layers.size(), 1u);
    EXPECT_EQ(l.steps[0].op_type, "Conv+Relu");
    const auto &p = l.layers[0].params;
    EXPECT_EQ(l.layers[0].generator, "conv2d");
    EXPECT_EQ(p.at("relu"), "true");
    EXPECT_EQ(p.at("pad_top"), "1");
    EXPECT_EQ(p.at("pad_left"), "0");
    EXPECT_EQ(p.at("pad_bottom"), "2");
    EXPECT_EQ(p.at("pad_right"), "1");
    EXPECT_EQ(p.at("stride"), "1");
    EXPECT_EQ(p.at("stride_y"), "2");
    EXPECT_EQ(p.at("kernel"), "2");
    EXPECT_EQ(p.at("kernel_y"), "3");
    EXPECT_EQ(l.steps[0].output.tensor, "y");
}

TEST(Lowering, ReluWithTwoConsumersIsNotFused) {
    ModelBuilder b;
    b.input("x", {1, 2, 4, 4});
    b.init_random("w", {2, 2, 1, 1});
    b.node("Conv", {"x", "w"}, {"c"}, "conv1");
    b.node("Relu", {"c"}, {"r"}, "relu1");
    b.node("Add", {"c", "r"}, {"y"}, "add1");
    b.output("y");
    const LoweredGraph l = lower(b);
    ASSERT_EQ(l.steps.size(), 3u);
    EXPECT_EQ(l.layers[l.steps[0].layer].params.at("relu"), "false");
    EXPECT_EQ(l.layers[l.steps[1].layer].generator, "activation");
    EXPECT_EQ(l.layers[l.steps[2].layer].generator, "eltwise");
    EXPECT_EQ(l.extra_constants.size(), 1u);  // the conv's zero bias
}

TEST(Lowering, DistinctLayersPlannedOnceAndViews) {
    ModelBuilder b;
    b.input("x", {2, 4, 3, 3});
    b.node("Relu", {"x"}, {"a"}, "r1");
    b.node("Sigmoid", {"a"}, {"s"}, "s1");
    b.node("Relu", {"s"}, {"c"}, "r2");
    b.node("Flatten", {"c"}, {"y"}, "flat");
    b.output("y");
    const LoweredGraph l = lower(b);
    ASSERT_EQ(l.steps.size(), 4u);
    EXPECT_EQ(l.layers.size(), 2u);  // relu once, sigmoid once
    EXPECT_EQ(l.steps[0].layer, l.steps[2].layer);
    EXPECT_EQ(l.steps[3].layer, -1);
    EXPECT_EQ(l.steps[3].output.tensor, "y");
}

TEST(Lowering, UnsupportedOperatorNamesTheNode) {
    ModelBuilder b;
    b.input("x", {1, 4, 2, 3});
    auto &t = b.node("Transpose", {"x"}, {"y"}, "my_transpose");
    ModelBuilder::attr_ints(t, "perm", {0, 1, 3, 2});
    b.output("y");
    try {
        lower(b);
        FAIL() << "no error";
    } catch (const sw_graph::Error &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("my_transpose"), std::string::npos) << m;
        EXPECT_NE(m.find("Transpose"), std::string::npos) << m;
        EXPECT_NE(m.find("no layer"), std::string::npos) << m;
    }
}

TEST(Lowering, GemmTransANamesTheNode) {
    ModelBuilder b;
    b.input("a", {4, 2});
    b.init_random("w", {3, 4});
    auto &n = b.node("Gemm", {"a", "w"}, {"y"}, "fc_t");
    ModelBuilder::attr_i(n, "transA", 1);
    ModelBuilder::attr_i(n, "transB", 1);
    b.output("y");
    try {
        lower(b);
        FAIL() << "no error";
    } catch (const sw_graph::Error &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("fc_t"), std::string::npos) << m;
        EXPECT_NE(m.find("transA"), std::string::npos) << m;
    }
}

} // namespace
