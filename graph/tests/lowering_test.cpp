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

TEST(Lowering, ShuffleUnitSliceSplitAndChannelShuffle) {
    for (bool use_split : {false, true}) {
        const LoweredGraph l = lower(sw_graph_test::shuffle_unit(use_split));
        std::vector<std::string> gens;
        for (const auto &s : l.steps) gens.push_back(s.layer < 0 ? "view" : l.layers[s.layer].generator);
        EXPECT_EQ(gens, (std::vector<std::string>{"channel_slice", "channel_slice", "activation", "concat",
                                                  "channel_shuffle"}))
            << "split " << use_split;
        const auto &lo = l.layers[l.steps[0].layer].params, &hi = l.layers[l.steps[1].layer].params;
        EXPECT_EQ(lo.at("begin"), "0");
        EXPECT_EQ(hi.at("begin"), "4");
        EXPECT_EQ(hi.at("in_channels"), "8");
        EXPECT_EQ(hi.at("channels"), "4");
        EXPECT_EQ(hi.at("batch"), "2");
        EXPECT_EQ(hi.at("width"), "15");  // H x W after the sliced axis
        EXPECT_EQ(l.steps[0].output.tensor, "lo");
        EXPECT_EQ(l.steps[1].output.tensor, "hi");
        const auto &sh = l.layers[l.steps[4].layer].params;
        EXPECT_EQ(sh.at("groups"), "2");
        EXPECT_EQ(sh.at("channels"), "8");
        EXPECT_EQ(l.steps[4].inputs[0].tensor, "cat");
        EXPECT_EQ(l.steps[4].output.tensor, "y");
    }
}

TEST(Lowering, ZeroPadRemovedOthersNamed) {
    for (int pad : {0, 1}) {
        ModelBuilder b;
        b.input("x", {1, 4, 6, 6});
        b.init_ints("pads", {0, 0, pad, pad, 0, 0, pad, pad});
        b.node("Pad", {"x", "pads"}, {"p"}, "my_pad");
        auto &a = b.node("AveragePool", {"p"}, {"y"}, "pool");
        ModelBuilder::attr_ints(a, "kernel_shape", {2, 2});
        ModelBuilder::attr_ints(a, "strides", {2, 2});
        b.output("y");
        if (pad == 0) {
            const LoweredGraph l = lower(b);
            ASSERT_EQ(l.steps.size(), 1u);
            EXPECT_EQ(l.layers[0].generator, "pool");
            EXPECT_EQ(l.steps[0].inputs[0].tensor, "x");
            continue;
        }
        try {
            lower(b);
            FAIL() << "no error";
        } catch (const sw_graph::Error &e) {
            const std::string m = e.what();
            EXPECT_NE(m.find("my_pad"), std::string::npos) << m;
            EXPECT_NE(m.find("(Pad)"), std::string::npos) << m;
        }
    }
}

TEST(Lowering, SliceWithStepsNamesTheNode) {
    ModelBuilder b;
    b.input("x", {1, 8, 2, 3});
    b.init_ints("starts", {0});
    b.init_ints("ends", {8});
    b.init_ints("axes", {1});
    b.init_ints("steps", {2});
    b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "strided");
    b.output("y");
    try {
        lower(b);
        FAIL() << "no error";
    } catch (const sw_graph::Error &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("strided"), std::string::npos) << m;
        EXPECT_NE(m.find("steps other than 1"), std::string::npos) << m;
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
