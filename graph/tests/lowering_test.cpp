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

#include <cmath>
#include <functional>

using sw_graph::LoweredGraph;
using sw_graph_test::ModelBuilder;

namespace {

LoweredGraph lower(const ModelBuilder &b, sw_graph::LowerOptions o = {}) {
    sw_graph::Graph g = b.infer();
    sw_graph::run_passes(g);
    return sw_graph::lower_graph(g, o);
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
    EXPECT_EQ(l.extra_constants.size(), 1u); // the conv's zero bias
}

// A ResNet block whose downsampling shortcut comes after the main branch in node order:
// conv2 + Add + Relu is one conv2d step with the shortcut as its fourth input, placed at
// the Add (after the shortcut's conv); an Add with broadcasting, or of a conv output that is
// read twice, is not fused.
TEST(Lowering, ConvResidualAddReluFused) {
    ModelBuilder b;
    b.input("x", {2, 4, 8, 8});
    b.init_random("w1", {6, 4, 3, 3});
    b.init_random("w2", {6, 6, 3, 3});
    b.init_random("wd", {6, 4, 1, 1});
    b.init_random("scale", {1, 6, 1, 1});
    auto &c1 = b.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
    ModelBuilder::attr_ints(c1, "pads", {1, 1, 1, 1});
    ModelBuilder::attr_ints(c1, "strides", {2, 2});
    b.node("Relu", {"c1"}, {"r1"}, "relu1");
    auto &c2 = b.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
    ModelBuilder::attr_ints(c2, "pads", {1, 1, 1, 1});
    auto &d = b.node("Conv", {"x", "wd"}, {"down"}, "downsample");
    ModelBuilder::attr_ints(d, "strides", {2, 2});
    b.node("Add", {"c2", "down"}, {"s"}, "add1");
    b.node("Relu", {"s"}, {"y"}, "relu2");
    // Not fused: a broadcasting Add, and a conv output read twice.
    auto &c3 = b.node("Conv", {"y", "w2"}, {"c3"}, "conv3");
    ModelBuilder::attr_ints(c3, "pads", {1, 1, 1, 1});
    b.node("Add", {"c3", "scale"}, {"z"}, "add_broadcast");
    auto &c4 = b.node("Conv", {"z", "w2"}, {"c4"}, "conv4");
    ModelBuilder::attr_ints(c4, "pads", {1, 1, 1, 1});
    b.node("Add", {"c4", "c4"}, {"out"}, "add_twice");
    b.output("out");
    const LoweredGraph l = lower(b);
    std::vector<std::string> ops;
    for (const auto &s : l.steps)
        ops.push_back(s.op_type);
    // The strided 1x1 shortcut is a subsample and a pointwise conv.
    EXPECT_EQ(ops, (std::vector<std::string>{"Conv+Relu", "Subsample", "Conv", "Conv+Add+Relu",
                                             "Conv", "Add", "Conv", "Add"}));
    ASSERT_EQ(l.steps.size(), 8u);
    const sw_graph::Step &fused = l.steps[3];
    EXPECT_NE(fused.node.find("conv2"), std::string::npos) << fused.node;
    EXPECT_EQ(l.steps[2].output.tensor, "down"); // the shortcut runs first
    EXPECT_EQ(fused.output.tensor, "y");
    ASSERT_EQ(fused.inputs.size(), 4u);
    EXPECT_EQ(fused.inputs[0].tensor, "r1");
    EXPECT_EQ(fused.inputs[3].tensor, "down");
    EXPECT_EQ(fused.inputs[3].extents, fused.output.extents);
    EXPECT_EQ(fused.output.extents, (std::vector<int>{4, 4, 6, 2}));
    const auto &p = l.layers[size_t(fused.layer)].params;
    EXPECT_EQ(p.at("residual"), "true");
    EXPECT_EQ(p.at("relu"), "true");
    EXPECT_EQ(l.layers[size_t(l.steps[4].layer)].params.count("residual"), 0u);
}

// A pointwise conv sees its map as one row of H*W pixels; with strides it reads a subsampled
// copy a pool step (1x1 window) writes first; a padded 1x1 conv keeps its map.
TEST(Lowering, PointwiseConvsSeeOneRowOfPixels) {
    ModelBuilder b;
    b.input("x", {2, 4, 7, 5});
    b.init_random("w", {6, 4, 1, 1});
    b.init_random("w2", {3, 6, 1, 1});
    b.init_random("w3", {3, 3, 1, 1});
    b.node("Conv", {"x", "w"}, {"a"}, "flat");
    auto &st = b.node("Conv", {"a", "w2"}, {"s"}, "strided");
    ModelBuilder::attr_ints(st, "strides", {2, 3});
    auto &pd = b.node("Conv", {"s", "w3"}, {"y"}, "padded");
    ModelBuilder::attr_ints(pd, "pads", {1, 1, 1, 1});
    b.output("y");
    const LoweredGraph l = lower(b);
    ASSERT_EQ(l.steps.size(), 4u);
    const auto params = [&](size_t k) { return l.layers[size_t(l.steps[k].layer)].params; };
    // flat: 7x5 -> one row of 35.
    EXPECT_EQ(l.steps[0].inputs[0].extents, (std::vector<int>{35, 1, 4, 2}));
    EXPECT_EQ(l.steps[0].output.extents, (std::vector<int>{35, 1, 6, 2}));
    EXPECT_EQ(params(0).at("width"), "35");
    EXPECT_EQ(params(0).at("height"), "1");
    // strided: a subsample of a (7x5, strides 2 along y and 3 along x: 4x2), then a row of 8.
    EXPECT_EQ(l.steps[1].op_type, "Subsample");
    EXPECT_EQ(l.layers[size_t(l.steps[1].layer)].generator, "pool");
    EXPECT_EQ(params(1).at("kernel"), "1");
    EXPECT_EQ(params(1).at("stride"), "3");
    EXPECT_EQ(params(1).at("stride_y"), "2");
    EXPECT_EQ(l.steps[1].inputs[0].tensor, "a");
    EXPECT_EQ(l.steps[1].inputs[0].extents, (std::vector<int>{5, 7, 6, 2}));
    EXPECT_EQ(l.steps[1].output.extents, (std::vector<int>{2, 4, 6, 2}));
    EXPECT_EQ(l.steps[2].inputs[0].tensor, l.steps[1].output.tensor);
    EXPECT_EQ(l.steps[2].inputs[0].extents, (std::vector<int>{8, 1, 6, 2}));
    EXPECT_EQ(l.steps[2].output.tensor, "s");
    EXPECT_EQ(l.steps[2].output.extents, (std::vector<int>{8, 1, 3, 2}));
    EXPECT_EQ(params(2).at("stride"), "1");
    // padded: its 4x2 map stays.
    EXPECT_EQ(l.steps[3].inputs[0].extents, (std::vector<int>{2, 4, 3, 2}));
    EXPECT_EQ(params(3).at("width"), "2");
}

// A Clip from 0 to a constant (ReLU6) after a conv is fused as relu_max; other Clips are not.
TEST(Lowering, ConvClipFusedAsRelu6) {
    ModelBuilder b;
    b.input("x", {1, 3, 6, 6});
    b.init_random("w", {4, 3, 3, 3});
    b.init("zero", {}, {0.f});
    b.init("six", {}, {6.f});
    b.init("minus", {}, {-1.f});
    b.init_random("w2", {4, 4, 3, 3});
    b.node("Conv", {"x", "w"}, {"c1"}, "conv1");
    b.node("Clip", {"c1", "zero", "six"}, {"r1"}, "relu6");
    b.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
    b.node("Clip", {"c2", "minus", "six"}, {"y"}, "clip");
    b.output("y");
    const LoweredGraph l = lower(b);
    ASSERT_EQ(l.steps.size(), 3u);
    EXPECT_EQ(l.steps[0].op_type, "Conv+Clip");
    EXPECT_EQ(l.steps[0].output.tensor, "r1");
    const auto &p = l.layers[size_t(l.steps[0].layer)].params;
    EXPECT_EQ(p.at("relu"), "true");
    EXPECT_EQ(p.at("relu_max"), "6");
    EXPECT_EQ(l.steps[1].op_type, "Conv");
    EXPECT_EQ(l.layers[size_t(l.steps[2].layer)].generator, "activation");
}

// MobileNetV3: a conv followed by HardSwish as torch.onnx exports it at opset 13
// (HardSigmoid(c), Mul(c, .)) is one step, conv2d with activation=hard_swish; the SE block's
// conv + HardSigmoid is one step with activation=hard_sigmoid; ONNX's HardSwish node (opset 14)
// after a conv that has another reader stays an activation layer of its own.
TEST(Lowering, ConvHardSwishAndHardSigmoidFused) {
    ModelBuilder b(14);
    b.input("x", {1, 3, 6, 6});
    b.init_random("w", {4, 3, 3, 3});
    b.init_random("w2", {4, 4, 1, 1});
    b.init_random("w3", {4, 4, 1, 1});
    b.node("Conv", {"x", "w"}, {"c1"}, "conv1");
    auto &h = b.node("HardSigmoid", {"c1"}, {"h1"}, "hsig1");
    ModelBuilder::attr_f(h, "alpha", 1.f / 6.f);
    b.node("Mul", {"c1", "h1"}, {"s1"}, "hswish1");
    b.node("Conv", {"s1", "w2"}, {"c2"}, "conv2");
    auto &h2 = b.node("HardSigmoid", {"c2"}, {"g"}, "gate");
    ModelBuilder::attr_f(h2, "alpha", 0.25f);
    ModelBuilder::attr_f(h2, "beta", 0.375f);
    b.node("Conv", {"g", "w3"}, {"c3"}, "conv3");
    b.node("HardSwish", {"c3"}, {"y1"}, "hswish3");
    b.node("Add", {"c3", "y1"}, {"y"}, "add");
    b.output("y");
    const LoweredGraph l = lower(b);
    ASSERT_EQ(l.steps.size(), 5u);
    EXPECT_EQ(l.steps[0].op_type, "Conv+HardSwish");
    EXPECT_EQ(l.steps[0].output.tensor, "s1");
    const auto &p = l.layers[size_t(l.steps[0].layer)].params;
    EXPECT_EQ(l.layers[size_t(l.steps[0].layer)].generator, "conv2d");
    EXPECT_EQ(p.at("relu"), "false");
    EXPECT_EQ(p.at("activation"), "hard_swish");
    EXPECT_EQ(std::stof(p.at("alpha")), 1.f / 6.f);
    EXPECT_EQ(p.at("beta"), "0.5");
    EXPECT_EQ(l.steps[1].op_type, "Conv+HardSigmoid");
    EXPECT_EQ(l.steps[1].output.tensor, "g");
    const auto &p2 = l.layers[size_t(l.steps[1].layer)].params;
    EXPECT_EQ(p2.at("activation"), "hard_sigmoid");
    EXPECT_EQ(p2.at("alpha"), "0.25");
    EXPECT_EQ(p2.at("beta"), "0.375");
    EXPECT_EQ(l.steps[2].op_type, "Conv");
    const auto &p3 = l.layers[size_t(l.steps[3].layer)];
    EXPECT_EQ(p3.generator, "activation");
    EXPECT_EQ(p3.params.at("op"), "hard_swish");
    EXPECT_EQ(std::stof(p3.params.at("alpha")), 1.f / 6.f);
    EXPECT_EQ(p3.params.at("size"), "64"); // 1 x 4 x 4 x 4: the 3x3 conv shrinks 6x6 to 4x4
}

// A BatchNormalization that is not folded into a conv (DenseNet's pre-activation) becomes
// channel_affine, and the Relu after it is fused.
TEST(Lowering, ChannelScaleShiftReluFused) {
    ModelBuilder b;
    b.input("x", {2, 3, 4, 5});
    b.init_random("gamma", {3}, 0.5f, 1.5f);
    b.init_random("beta", {3});
    b.init_random("mean", {3});
    b.init_random("var", {3}, 0.5f, 1.5f);
    b.node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"bn"}, "bn");
    b.node("Relu", {"bn"}, {"y"}, "relu");
    b.output("y");
    const LoweredGraph l = lower(b);
    ASSERT_EQ(l.steps.size(), 1u);
    EXPECT_EQ(l.steps[0].op_type, "ChannelScaleShift+Relu");
    EXPECT_EQ(l.layers[size_t(l.steps[0].layer)].generator, "channel_affine");
    EXPECT_EQ(l.layers[size_t(l.steps[0].layer)].params.at("relu"), "true");
    EXPECT_EQ(l.steps[0].output.tensor, "y");
    EXPECT_EQ(l.steps[0].output.extents, (std::vector<int>{20, 1, 3, 2}));
}

/** x -> BatchNormalization (not foldable: no conv before it) [-> Relu] -> Conv (3x3, pad 1)
 * -> y, DenseNet's pre-activation; `extra` adds nodes reading the BN's (or Relu's) output. */
ModelBuilder bn_conv(bool relu, int hw, const std::function<void(ModelBuilder &)> &extra = {}) {
    ModelBuilder b;
    b.input("x", {1, 5, hw, hw});
    b.init_random("gamma", {5}, 0.5f, 1.5f);
    b.init_random("beta", {5});
    b.init_random("mean", {5});
    b.init_random("var", {5}, 0.5f, 1.5f);
    b.init_random("w", {4, 5, 3, 3});
    b.init_random("bias", {4});
    b.node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"bn"}, "bn");
    if (relu)
        b.node("Relu", {"bn"}, {"a"}, "relu");
    auto &c = b.node("Conv", {relu ? "a" : "bn", "w", "bias"}, {"y"}, "conv");
    ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
    b.output("y");
    if (extra)
        extra(b);
    return b;
}

// BN -> Relu -> Conv: one conv2d step with the affine as its prologue, reading x; the
// affine's and the conv's unfused roofline terms kept for the report.
TEST(Lowering, ChannelScaleShiftReluFusedIntoConvAsPrologue) {
    const LoweredGraph l = lower(bn_conv(true, 6), {sw_graph::PrologueFusion::Always});
    ASSERT_EQ(l.steps.size(), 1u);
    const sw_graph::Step &s = l.steps[0];
    EXPECT_EQ(s.op_type, "ChannelScaleShift+Relu+Conv");
    const auto &p = l.layers[size_t(s.layer)].params;
    EXPECT_EQ(l.layers[size_t(s.layer)].generator, "conv2d");
    EXPECT_EQ(p.at("prologue"), "scale_shift_relu");
    EXPECT_EQ(p.at("relu"), "false");
    ASSERT_EQ(s.inputs.size(), 5u);
    EXPECT_EQ(s.inputs[0].tensor, "x");
    EXPECT_EQ(s.inputs[0].extents, (std::vector<int>{6, 6, 5, 1}));
    EXPECT_EQ(s.inputs[1].tensor, "w");
    EXPECT_EQ(s.inputs[3].extents, (std::vector<int>{5})); // scale
    EXPECT_EQ(s.inputs[4].extents, (std::vector<int>{5})); // shift
    EXPECT_EQ(s.output.tensor, "y");
    ASSERT_EQ(s.unfused.size(), 2u);
    EXPECT_EQ(s.unfused[0].generator, "channel_affine");
    EXPECT_EQ(s.unfused[0].params.at("relu"), "true");
    EXPECT_EQ(s.unfused[0].read_elements, 180 + 10);
    EXPECT_EQ(s.unfused[0].write_elements, 180);
    EXPECT_EQ(s.unfused[1].generator, "conv2d");
    EXPECT_EQ(s.unfused[1].params.count("prologue"), 0u);
    EXPECT_EQ(s.unfused[1].read_elements, 180 + 4 * 5 * 9 + 4);
    EXPECT_EQ(s.unfused[1].write_elements, 4 * 36);
}

// Without the Relu: prologue=scale_shift. Auto fuses on maps of 56x56 and more only, Never
// not at all: then the affine stays a channel_affine step.
TEST(Lowering, PrologueFusionOptions) {
    LoweredGraph l = lower(bn_conv(false, 6), {sw_graph::PrologueFusion::Always});
    ASSERT_EQ(l.steps.size(), 1u);
    EXPECT_EQ(l.steps[0].op_type, "ChannelScaleShift+Conv");
    EXPECT_EQ(l.layers[size_t(l.steps[0].layer)].params.at("prologue"), "scale_shift");
    l = lower(bn_conv(true, 6)); // Auto, a 6x6 map
    ASSERT_EQ(l.steps.size(), 2u);
    EXPECT_EQ(l.steps[0].op_type, "ChannelScaleShift+Relu");
    EXPECT_EQ(l.steps[1].op_type, "Conv");
    EXPECT_TRUE(l.steps[1].unfused.empty());
    l = lower(bn_conv(true, 56)); // Auto, 56x56
    ASSERT_EQ(l.steps.size(), 1u);
    EXPECT_EQ(l.steps[0].op_type, "ChannelScaleShift+Relu+Conv");
    l = lower(bn_conv(true, 56), {sw_graph::PrologueFusion::Never});
    ASSERT_EQ(l.steps.size(), 2u);
    EXPECT_EQ(l.layers[size_t(l.steps[1].layer)].params.count("prologue"), 0u);
    EXPECT_EQ(sw_graph::parse_prologue_fusion("never"), sw_graph::PrologueFusion::Never);
    EXPECT_THROW(sw_graph::parse_prologue_fusion("sometimes"), sw_graph::Error);
}

/** A coster for the tests: the seconds of a fused conv, of a channel_affine and of a conv
 * without prologue; records every call. */
struct FakeCoster {
    double fused = 0, affine = 0, conv = 0;
    std::vector<std::vector<sw_graph::LayerSpec>> calls;
    sw_graph::LayerCoster coster() {
        return [this](const std::vector<sw_graph::LayerSpec> &layers) {
            calls.push_back(layers);
            std::vector<double> r;
            for (const sw_graph::LayerSpec &l : layers) {
                r.push_back(l.generator == "channel_affine" ? affine
                            : l.params.count("prologue")    ? fused
                                                            : conv);
            }
            return r;
        };
    }
};

sw_graph::LowerOptions with(const sw_graph::LayerCoster &coster) {
    sw_graph::LowerOptions o;
    o.coster = coster;
    return o;
}

// PrologueFusion::Auto with a coster: the coster sees the candidate's layers in both forms
// (the conv with its prologue, the channel_affine and the conv without) once each, and its
// answer decides against the map-size rule both ways: fused on a 6x6 map when the fused conv
// costs less than the two layers, not fused on 56x56 when it costs more.
TEST(Lowering, PrologueFusionDecidedByTheCoster) {
    FakeCoster cheap_fused{1e-3, 0.6e-3, 0.6e-3};
    LoweredGraph l = lower(bn_conv(true, 6), with(cheap_fused.coster()));
    ASSERT_EQ(cheap_fused.calls.size(), 1u);
    const std::vector<sw_graph::LayerSpec> &asked = cheap_fused.calls[0];
    ASSERT_EQ(asked.size(), 3u);
    int prologue = 0, affine = 0, plain = 0;
    for (const sw_graph::LayerSpec &a : asked) {
        if (a.generator == "channel_affine") {
            affine++;
            EXPECT_EQ(a.params.at("channels"), "5");
            EXPECT_EQ(a.params.at("width"), "36");
            EXPECT_EQ(a.params.at("relu"), "true");
        } else {
            EXPECT_EQ(a.generator, "conv2d");
            EXPECT_EQ(a.params.at("in_channels"), "5");
            EXPECT_EQ(a.params.at("height"), "6");
            (a.params.count("prologue") ? prologue : plain)++;
            if (a.params.count("prologue"))
                EXPECT_EQ(a.params.at("prologue"), "scale_shift_relu");
        }
    }
    EXPECT_EQ(prologue, 1);
    EXPECT_EQ(affine, 1);
    EXPECT_EQ(plain, 1);
    ASSERT_EQ(l.steps.size(), 1u);
    EXPECT_EQ(l.steps[0].op_type, "ChannelScaleShift+Relu+Conv");
    ASSERT_EQ(l.prologue_choices.size(), 1u);
    const sw_graph::PrologueChoice &c = l.prologue_choices[0];
    EXPECT_TRUE(c.costed);
    EXPECT_TRUE(c.fuse);
    EXPECT_EQ(c.pixels, 36);
    EXPECT_DOUBLE_EQ(c.fused_seconds, 1e-3);
    EXPECT_DOUBLE_EQ(c.affine_seconds + c.conv_seconds, 1.2e-3);
    // The layers the choice names are the ones each form lowers to.
    EXPECT_EQ(l.layers[size_t(l.steps[0].layer)].key(), c.fused.key());
    EXPECT_EQ(c.unfused_affine.generator, "channel_affine");
    EXPECT_EQ(c.unfused_conv.params.count("prologue"), 0u);

    FakeCoster dear_fused{1.3e-3, 0.6e-3, 0.6e-3};
    l = lower(bn_conv(true, 56), with(dear_fused.coster()));
    ASSERT_EQ(dear_fused.calls.size(), 1u);
    ASSERT_EQ(l.steps.size(), 2u);
    EXPECT_EQ(l.steps[0].op_type, "ChannelScaleShift+Relu");
    EXPECT_EQ(l.steps[1].op_type, "Conv");
    ASSERT_EQ(l.prologue_choices.size(), 1u);
    EXPECT_TRUE(l.prologue_choices[0].costed);
    EXPECT_FALSE(l.prologue_choices[0].fuse);
    // The unfused steps are the layers the coster was asked about.
    EXPECT_EQ(l.layers[size_t(l.steps[0].layer)].key(), l.prologue_choices[0].unfused_affine.key());
    EXPECT_EQ(l.layers[size_t(l.steps[1].layer)].key(), l.prologue_choices[0].unfused_conv.key());

    // Always and Never do not ask.
    FakeCoster unused{1e-3, 1e-3, 1e-3};
    sw_graph::LowerOptions o = with(unused.coster());
    o.fuse_prologue = sw_graph::PrologueFusion::Never;
    EXPECT_EQ(lower(bn_conv(true, 6), o).steps.size(), 2u);
    o.fuse_prologue = sw_graph::PrologueFusion::Always;
    EXPECT_EQ(lower(bn_conv(true, 56), o).steps.size(), 1u);
    EXPECT_TRUE(unused.calls.empty());
}

// Two candidates with the same layers: the coster is asked once, about each distinct layer
// once, and both follow its answer. A graph without a candidate does not ask.
TEST(Lowering, PrologueCosterAskedOnceAboutEachDistinctLayer) {
    FakeCoster coster{1e-3, 0.1e-3, 0.2e-3}; // unfused cheaper
    const LoweredGraph l =
        lower(bn_conv(true, 6,
                      [](ModelBuilder &b) {
                          b.input("x2", {1, 5, 6, 6});
                          b.node("BatchNormalization", {"x2", "gamma", "beta", "mean", "var"},
                                 {"bn2"}, "bn2");
                          b.node("Relu", {"bn2"}, {"a2"}, "relu2");
                          auto &c = b.node("Conv", {"a2", "w", "bias"}, {"y2"}, "conv2");
                          ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
                          b.output("y2");
                      }),
              with(coster.coster()));
    ASSERT_EQ(coster.calls.size(), 1u);
    EXPECT_EQ(coster.calls[0].size(), 3u);
    ASSERT_EQ(l.prologue_choices.size(), 2u);
    for (const sw_graph::PrologueChoice &c : l.prologue_choices) {
        EXPECT_TRUE(c.costed);
        EXPECT_FALSE(c.fuse);
    }
    EXPECT_EQ(l.steps.size(), 4u);
    EXPECT_EQ(l.layers.size(), 2u); // the two branches share their two layers

    FakeCoster never_asked{1e-3, 1e-3, 1e-3};
    ModelBuilder b;
    b.input("x", {1, 3, 6, 6});
    b.init_random("w", {4, 3, 3, 3});
    b.node("Conv", {"x", "w"}, {"y"}, "conv");
    b.output("y");
    EXPECT_TRUE(lower(b, with(never_asked.coster())).prologue_choices.empty());
    EXPECT_TRUE(never_asked.calls.empty());
}

// Where the coster knows no cost of a candidate's layers (0, negative, not finite), or there
// is no coster, the map-size rule decides (kPrologueMinPixels); a coster that answers for
// the wrong number of layers is an error.
TEST(Lowering, PrologueFusionFallsBackToTheMapSizeRule) {
    for (double unknown : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
        FakeCoster c{unknown, 1e-3, 1e-3};
        LoweredGraph l = lower(bn_conv(true, 56), with(c.coster()));
        ASSERT_EQ(l.prologue_choices.size(), 1u);
        EXPECT_FALSE(l.prologue_choices[0].costed) << unknown;
        EXPECT_TRUE(l.prologue_choices[0].fuse) << unknown;
        EXPECT_EQ(l.prologue_choices[0].fused_seconds, 0.0) << unknown;
        EXPECT_EQ(l.steps.size(), 1u) << unknown;
        c.calls.clear();
        l = lower(bn_conv(true, 6), with(c.coster()));
        EXPECT_FALSE(l.prologue_choices.at(0).fuse) << unknown;
        EXPECT_EQ(l.steps.size(), 2u) << unknown;
    }
    // No coster: the rule, and the choices say so.
    for (int hw : {6, 55, 56, 60}) {
        const LoweredGraph l = lower(bn_conv(true, hw));
        ASSERT_EQ(l.prologue_choices.size(), 1u);
        const bool big = hw * hw >= sw_graph::kPrologueMinPixels;
        EXPECT_FALSE(l.prologue_choices[0].costed);
        EXPECT_EQ(l.prologue_choices[0].fuse, big) << hw;
        EXPECT_EQ(l.steps.size(), big ? 1u : 2u) << hw;
    }
    sw_graph::LowerOptions wrong;
    wrong.coster = [](const std::vector<sw_graph::LayerSpec> &) {
        return std::vector<double>{1e-3};
    };
    try {
        lower(bn_conv(true, 6), wrong);
        ADD_FAILURE() << "no error";
    } catch (const sw_graph::Error &e) {
        EXPECT_NE(std::string(e.what()).find("1 costs for 3 layers"), std::string::npos)
            << e.what();
    }
}

// Not fused when another node reads the affine's (or its Relu's) output, or when it is a
// graph output: the affine's result is needed as a tensor.
TEST(Lowering, PrologueNotFusedWithTwoReadersOrAsGraphOutput) {
    const sw_graph::LowerOptions always{sw_graph::PrologueFusion::Always};
    for (bool relu : {false, true}) {
        const std::string a = relu ? "a" : "bn";
        LoweredGraph l = lower(bn_conv(relu, 6,
                                       [&](ModelBuilder &b) {
                                           b.node("GlobalAveragePool", {a}, {"gap"}, "gap");
                                           b.output("gap");
                                       }),
                               always);
        ASSERT_EQ(l.steps.size(), 3u) << relu;
        EXPECT_EQ(l.steps[0].op_type, relu ? "ChannelScaleShift+Relu" : "ChannelScaleShift");
        EXPECT_EQ(l.steps[1].op_type, "Conv");
        EXPECT_EQ(l.layers[size_t(l.steps[1].layer)].params.count("prologue"), 0u);
        EXPECT_EQ(l.steps[1].inputs[0].tensor, a);

        l = lower(bn_conv(relu, 6, [&](ModelBuilder &b) { b.output(a); }), always);
        ASSERT_EQ(l.steps.size(), 2u) << relu;
        EXPECT_EQ(l.steps[0].output.tensor, a);
        EXPECT_EQ(l.layers[size_t(l.steps[1].layer)].params.count("prologue"), 0u);
    }
    // A second Conv reading the same tensor: two readers, neither fused.
    LoweredGraph l =
        lower(bn_conv(true, 6,
                      [](ModelBuilder &b) {
                          auto &c = b.node("Conv", {"a", "w", "bias"}, {"y2"}, "conv2");
                          ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
                          b.output("y2");
                      }),
              always);
    ASSERT_EQ(l.steps.size(), 3u);
    EXPECT_EQ(l.steps[0].op_type, "ChannelScaleShift+Relu");
}

// MatMul by a constant: the rows of A (all dims but the last) are the batch, a B with
// leading 1s is a matrix, and an Add of a broadcast (non-constant) tensor is not fused. B as
// it is (K, N) where the N outputs are whole vectors (8); 5 outputs take it transposed once
// at lowering, (N, K).
TEST(Lowering, MatMulAsDense) {
    for (const int N : {8, 5}) {
        ModelBuilder b;
        b.input("x", {2, 3, 4, 6});
        b.input("other", {2, 3, 4, N});
        const std::vector<float> src = b.init_random("w", {1, 1, 6, N});
        b.node("MatMul", {"x", "w"}, {"m"}, "mm");
        b.node("Add", {"m", "other"}, {"y"}, "add_computed");
        b.output("y");
        const LoweredGraph l = lower(b);
        ASSERT_EQ(l.steps.size(), 2u);
        EXPECT_EQ(l.steps[0].op_type, "MatMul");
        const auto &p = l.layers[size_t(l.steps[0].layer)].params;
        EXPECT_EQ(p.at("batch"), "24");
        EXPECT_EQ(p.at("in_features"), "6");
        EXPECT_EQ(p.at("out_features"), std::to_string(N));
        const sw_graph::LayerArg &w = l.steps[0].inputs.at(1);
        if (N == 8) {
            EXPECT_EQ(p.at("weights_layout"), "in_out");
            EXPECT_EQ(w.tensor, "w");
            EXPECT_EQ(w.extents, (std::vector<int>{8, 6}));
        } else {
            EXPECT_EQ(p.count("weights_layout"), 0u);
            EXPECT_EQ(w.extents, (std::vector<int>{6, 5}));
            ASSERT_TRUE(l.extra_constants.count(w.tensor)) << w.tensor;
            // (o, k) of the new constant is (k, o) of B.
            const std::vector<float> &t = l.extra_constants.at(w.tensor);
            for (int k = 0; k < 6; k++) {
                for (int o = 0; o < 5; o++)
                    EXPECT_EQ(t[size_t(o * 6 + k)], src[size_t(k * 5 + o)]);
            }
        }
        EXPECT_EQ(l.steps[0].output.extents, (std::vector<int>{N, 24}));
        EXPECT_EQ(l.layers[size_t(l.steps[1].layer)].generator, "eltwise");
    }
}

// Gemm's weights: (K, N) where B is that (transB=0) or a constant (N, K) multiplied by 16 rows
// or more (transposed once at lowering); (N, K) as they come for fewer rows (a classifier),
// and for outputs that are no whole vectors (5).
TEST(Lowering, GemmWeightsLayoutByRows) {
    for (const int N : {8, 5}) {
        for (const int rows : {1, 15, 16, 197}) {
            ModelBuilder b;
            b.input("a", {rows, 6});
            const std::vector<float> src = b.init_random("w", {N, 6});
            auto &n = b.node("Gemm", {"a", "w"}, {"y"}, "fc");
            ModelBuilder::attr_i(n, "transB", 1);
            b.output("y");
            const LoweredGraph l = lower(b);
            ASSERT_EQ(l.steps.size(), 1u);
            const auto &p = l.layers[size_t(l.steps[0].layer)].params;
            const sw_graph::LayerArg &w = l.steps[0].inputs.at(1);
            if (rows >= 16 && N % 4 == 0) {
                EXPECT_EQ(p.at("weights_layout"), "in_out") << rows;
                EXPECT_EQ(w.extents, (std::vector<int>{N, 6})) << rows;
                ASSERT_TRUE(l.extra_constants.count(w.tensor)) << w.tensor;
                // The transpose: (k, o) of the new constant is (o, k) of B.
                const std::vector<float> &t = l.extra_constants.at(w.tensor);
                for (int k = 0; k < 6; k++) {
                    for (int o = 0; o < N; o++)
                        EXPECT_EQ(t[size_t(k * N + o)], src[size_t(o * 6 + k)]);
                }
            } else {
                EXPECT_EQ(p.count("weights_layout"), 0u) << rows;
                EXPECT_EQ(w.tensor, "w");
                EXPECT_EQ(w.extents, (std::vector<int>{6, N})) << rows;
            }
        }
    }
}

// A global pool keeps the rows of its plane (the layer stages whole rows in LDM: one row of a
// 2048 x 2048 plane would need 16 MB), and ReduceMean over trailing axes reduces their rows.
TEST(Lowering, GlobalPoolKeepsRows) {
    ModelBuilder b;
    b.input("x", {1, 3, 2048, 2048});
    b.input("t", {2, 5, 6, 7});
    b.node("GlobalAveragePool", {"x"}, {"y"}, "gap");
    auto &rm = b.node("ReduceMean", {"t"}, {"z"}, "mean");
    ModelBuilder::attr_ints(rm, "axes", {1, 2, 3});
    b.output("y");
    b.output("z");
    const LoweredGraph l = lower(b);
    ASSERT_EQ(l.steps.size(), 2u);
    const auto &p = l.layers[size_t(l.steps[0].layer)].params;
    EXPECT_EQ(p.at("height"), "2048");
    EXPECT_EQ(p.at("width"), "2048");
    EXPECT_EQ(l.steps[0].inputs[0].extents, (std::vector<int>{2048, 2048, 3, 1}));
    EXPECT_EQ(l.steps[1].inputs[0].extents, (std::vector<int>{7, 30, 1, 2}));
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
    EXPECT_EQ(l.layers.size(), 2u); // relu once, sigmoid once
    EXPECT_EQ(l.steps[0].layer, l.steps[2].layer);
    EXPECT_EQ(l.steps[3].layer, -1);
    EXPECT_EQ(l.steps[3].output.tensor, "y");
}

TEST(Lowering, UnsupportedOperatorNamesTheNode) {
    ModelBuilder b;
    b.input("x", {2, 4, 2, 3, 5});
    auto &t = b.node("Transpose", {"x"}, {"y"}, "my_transpose");
    ModelBuilder::attr_ints(t, "perm", {4, 2, 0, 3, 1}); // rank 5 even once reduced
    b.output("y");
    try {
        lower(b);
        FAIL() << "no error";
    } catch (const sw_graph::Error &e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("my_transpose"), std::string::npos) << m;
        EXPECT_NE(m.find("Transpose"), std::string::npos) << m;
        EXPECT_NE(m.find("that is of rank 5 with its dims of 1 dropped"), std::string::npos) << m;
    }
}

TEST(Lowering, ShuffleUnitSliceSplitAndChannelShuffle) {
    for (bool use_split : {false, true}) {
        const LoweredGraph l = lower(sw_graph_test::shuffle_unit(use_split));
        std::vector<std::string> gens;
        for (const auto &s : l.steps)
            gens.push_back(s.layer < 0 ? "view" : l.layers[s.layer].generator);
        // The concat fused into the shuffle (fuse_concat_into_shuffle): one input per group.
        EXPECT_EQ(gens, (std::vector<std::string>{"channel_slice", "channel_slice", "activation",
                                                  "channel_shuffle"}))
            << "split " << use_split;
        const auto &lo = l.layers[l.steps[0].layer].params, &hi = l.layers[l.steps[1].layer].params;
        EXPECT_EQ(lo.at("begin"), "0");
        EXPECT_EQ(hi.at("begin"), "4");
        EXPECT_EQ(hi.at("in_channels"), "8");
        EXPECT_EQ(hi.at("channels"), "4");
        EXPECT_EQ(hi.at("batch"), "2");
        EXPECT_EQ(hi.at("width"), "15"); // H x W after the sliced axis
        EXPECT_EQ(l.steps[0].output.tensor, "lo");
        EXPECT_EQ(l.steps[1].output.tensor, "hi");
        const auto &sh = l.layers[l.steps[3].layer].params;
        EXPECT_EQ(sh.at("groups"), "2");
        EXPECT_EQ(sh.at("channels"), "8");
        EXPECT_EQ(sh.at("inputs"), "2");
        EXPECT_EQ(sh.at("transposed_view"), "true");
        ASSERT_EQ(l.steps[3].inputs.size(), 2u);
        EXPECT_EQ(l.steps[3].inputs[0].tensor, "lo");
        EXPECT_EQ(l.steps[3].inputs[1].tensor, "r");
        EXPECT_EQ(l.steps[3].inputs[1].extents, (std::vector<int>{15, 4, 1, 2}));
        EXPECT_EQ(l.steps[3].output.tensor, "y");
        EXPECT_EQ(l.steps[3].op_type, "Concat+ChannelShuffle");
    }
    // Not fused where the concatenation is read elsewhere too (here: a graph output).
    ModelBuilder b = sw_graph_test::shuffle_unit(false);
    b.output("cat");
    const LoweredGraph l = lower(b);
    std::vector<std::string> gens;
    for (const auto &s : l.steps)
        gens.push_back(s.layer < 0 ? "view" : l.layers[s.layer].generator);
    EXPECT_EQ(gens, (std::vector<std::string>{"channel_slice", "channel_slice", "activation",
                                              "concat", "channel_shuffle"}));
}

// A zero Pad is removed; a zero Pad of 1 before an AveragePool is folded into it
// (fold_pad_into_window: count_include_pad); a reflect Pad is a `pad` layer; a Pad the layer
// cannot express is an error naming the node.
TEST(Lowering, PadRemovedFoldedLoweredOrNamed) {
    for (const char *mode : {"zero", "one", "reflect", "wrap"}) {
        const int pad = std::string(mode) == "zero" ? 0 : 1;
        ModelBuilder b;
        b.input("x", {1, 4, 6, 6});
        b.init_ints("pads", {0, 0, pad, pad, 0, 0, pad, 2 * pad});
        auto &p = b.node("Pad", {"x", "pads"}, {"p"}, "my_pad");
        if (std::string(mode) == "reflect" || std::string(mode) == "wrap")
            ModelBuilder::attr_s(p, "mode", mode);
        auto &a = b.node("AveragePool", {"p"}, {"y"}, "pool");
        ModelBuilder::attr_ints(a, "kernel_shape", {2, 2});
        ModelBuilder::attr_ints(a, "strides", {2, 2});
        b.output("y");
        if (std::string(mode) == "wrap") {
            try {
                lower(b);
                FAIL() << "no error";
            } catch (const sw_graph::Error &e) {
                const std::string m = e.what();
                EXPECT_NE(m.find("my_pad"), std::string::npos) << m;
                EXPECT_NE(m.find("(Pad)"), std::string::npos) << m;
                EXPECT_NE(m.find("mode 'wrap' is not supported"), std::string::npos) << m;
            }
            continue;
        }
        const LoweredGraph l = lower(b);
        if (std::string(mode) != "reflect") {
            ASSERT_EQ(l.steps.size(), 1u);
            EXPECT_EQ(l.layers[0].generator, "pool");
            EXPECT_EQ(l.steps[0].inputs[0].tensor, "x");
            EXPECT_EQ(l.layers[0].params.at("count_include_pad"), pad ? "true" : "false");
            continue;
        }
        ASSERT_EQ(l.steps.size(), 2u);
        const auto &pl = l.layers[size_t(l.steps[0].layer)];
        EXPECT_EQ(pl.generator, "pad");
        EXPECT_EQ(pl.params.at("shape"), "1,4,6,6");
        EXPECT_EQ(pl.params.at("pads"), "0,0,1,1,0,0,1,2");
        EXPECT_EQ(pl.params.at("mode"), "reflect");
        EXPECT_EQ(l.steps[0].output.extents, (std::vector<int>{9, 8, 4, 1}));
    }
}

// Resize (issue 24, FCN): sizes (torch's F.interpolate(size=...), empty roi and scales), scales
// (passed to the layer: ONNX's coordinates use them), Upsample (opset 9: asymmetric, floor), an
// identity Resize as a view; what resize cannot do is an error naming the node and the
// attribute or input.
TEST(Lowering, ResizeAndUpsample) {
    {
        ModelBuilder b;
        b.input("x", {2, 21, 4, 5});
        b.init_ints("sizes", {2, 21, 32, 37});
        auto &r = b.node("Resize", {"x", "", "", "sizes"}, {"y"}, "up");
        ModelBuilder::attr_s(r, "mode", "linear");
        ModelBuilder::attr_s(r, "coordinate_transformation_mode", "half_pixel");
        ModelBuilder::attr_s(r, "nearest_mode", "floor");
        ModelBuilder::attr_f(r, "cubic_coeff_a", -0.75f);
        b.output("y");
        const LoweredGraph l = lower(b);
        ASSERT_EQ(l.steps.size(), 1u);
        const sw_graph::LayerSpec &s = l.layers[0];
        EXPECT_EQ(s.generator, "resize");
        EXPECT_EQ(s.params.at("mode"), "linear");
        EXPECT_EQ(s.params.at("coordinate"), "half_pixel");
        EXPECT_EQ(s.params.at("out_height"), "32");
        EXPECT_EQ(s.params.at("out_width"), "37");
        EXPECT_EQ(s.params.at("batch"), "2");
        EXPECT_EQ(s.params.count("scale_x"), 0u); // sizes: out / in
        EXPECT_EQ(s.params.count("nearest_mode"), 0u);
        EXPECT_EQ(l.steps[0].inputs[0].extents, (std::vector<int>{5, 4, 21, 2}));
        EXPECT_EQ(l.steps[0].output.extents, (std::vector<int>{37, 32, 21, 2}));
    }
    {
        ModelBuilder b;
        b.input("x", {1, 3, 5, 4});
        b.init("scales", {4}, {1.f, 1.f, 0.6f, 2.5f});
        auto &r = b.node("Resize", {"x", "", "scales"}, {"y"}, "nn");
        ModelBuilder::attr_s(r, "coordinate_transformation_mode", "asymmetric");
        b.output("y");
        const LoweredGraph l = lower(b);
        ASSERT_EQ(l.steps.size(), 1u);
        const sw_graph::LayerSpec &s = l.layers[0];
        EXPECT_EQ(s.params.at("mode"), "nearest");
        EXPECT_EQ(s.params.at("nearest_mode"), "round_prefer_floor");
        EXPECT_EQ(s.params.at("out_height"), "3"); // floor(5 * 0.6)
        EXPECT_EQ(s.params.at("out_width"), "10");
        EXPECT_EQ(std::stod(s.params.at("scale_y")), double(0.6f));
        EXPECT_EQ(std::stod(s.params.at("scale_x")), 2.5);
    }
    {
        ModelBuilder b(9);
        b.input("x", {1, 2, 3, 3});
        b.init("scales", {4}, {1.f, 1.f, 2.f, 2.f});
        b.node("Upsample", {"x", "scales"}, {"y"}, "ups");
        b.output("y");
        const LoweredGraph l = lower(b);
        ASSERT_EQ(l.steps.size(), 1u);
        EXPECT_EQ(l.layers[0].params.at("coordinate"), "asymmetric");
        EXPECT_EQ(l.layers[0].params.at("nearest_mode"), "floor");
        EXPECT_EQ(l.layers[0].params.at("out_width"), "6");
    }
    {
        ModelBuilder b;
        b.input("x", {1, 2, 3, 3});
        b.init("scales", {4}, {1.f, 1.f, 1.f, 1.f});
        b.node("Resize", {"x", "", "scales"}, {"y"}, "same");
        b.output("y");
        const LoweredGraph l = lower(b);
        ASSERT_EQ(l.steps.size(), 1u);
        EXPECT_EQ(l.steps[0].layer, -1); // a view
    }
    struct Bad {
        std::string attr, value, expect;
        std::vector<float> scales;
    };
    const std::vector<Bad> bad = {
        {"mode", "cubic", "attribute mode='cubic' is not supported", {1, 1, 2, 2}},
        {"coordinate_transformation_mode",
         "tf_crop_and_resize",
         "attribute coordinate_transformation_mode='tf_crop_and_resize' is not supported",
         {1, 1, 2, 2}},
        {"nearest_mode",
         "round_half_even",
         "attribute nearest_mode='round_half_even'",
         {1, 1, 2, 2}},
        {"", "", "resizes dim 1 (only the last two, H and W, are supported)", {1, 2, 2, 2}},
        {"", "", "scales value -2.000000 is not a number > 0", {1, 1, -2, 2}},
        {"", "", "scales has 3 values for 4 axes", {1, 2, 2}},
    };
    for (const Bad &c : bad) {
        ModelBuilder b;
        b.input("x", {1, 2, 3, 3});
        b.init("scales", {int64_t(c.scales.size())}, c.scales);
        auto &r = b.node("Resize", {"x", "", "scales"}, {"y"}, "bad_resize");
        if (!c.attr.empty())
            ModelBuilder::attr_s(r, c.attr, c.value);
        b.output("y");
        try {
            lower(b);
            ADD_FAILURE() << "no error for " << c.expect;
        } catch (const sw_graph::Error &e) {
            const std::string m = e.what();
            EXPECT_NE(m.find("bad_resize"), std::string::npos) << m;
            EXPECT_NE(m.find(c.expect), std::string::npos) << m;
        }
    }
    // Non-constant scales, and both scales and sizes.
    {
        ModelBuilder b;
        b.input("x", {1, 2, 3, 3});
        b.input("s", {4});
        b.node("Resize", {"x", "", "s"}, {"y"}, "dyn");
        b.output("y");
        try {
            lower(b);
            ADD_FAILURE() << "no error";
        } catch (const sw_graph::Error &e) {
            EXPECT_NE(std::string(e.what()).find("'dyn' (Resize): scales (input 's') is not a "
                                                 "constant"),
                      std::string::npos)
                << e.what();
        }
    }
    {
        ModelBuilder b;
        b.input("x", {1, 2, 3, 3});
        b.init("scales", {4}, {1.f, 1.f, 2.f, 2.f});
        b.init_ints("sizes", {1, 2, 6, 6});
        b.node("Resize", {"x", "", "scales", "sizes"}, {"y"}, "both");
        b.output("y");
        try {
            lower(b);
            ADD_FAILURE() << "no error";
        } catch (const sw_graph::Error &e) {
            EXPECT_NE(std::string(e.what()).find("both scales and sizes are given"),
                      std::string::npos)
                << e.what();
        }
    }
}

// ConvTranspose (issue 24): a decoder's x2 (stride 2, pads 1, output_padding 1) with its
// parameters and a zero bias; SAME_UPPER pads from auto_pad; a 3-D one and an unknown auto_pad
// refused naming the node.
TEST(Lowering, ConvTranspose) {
    {
        ModelBuilder b;
        b.input("x", {2, 6, 5, 7});
        b.init_random("w", {6, 4, 3, 3}); // (C, M / group, kH, kW), group 2: M = 8
        auto &n = b.node("ConvTranspose", {"x", "w"}, {"y"}, "up2");
        ModelBuilder::attr_ints(n, "strides", {2, 2});
        ModelBuilder::attr_ints(n, "pads", {1, 1, 1, 1});
        ModelBuilder::attr_ints(n, "output_padding", {1, 1});
        ModelBuilder::attr_i(n, "group", 2);
        b.output("y");
        const LoweredGraph l = lower(b);
        ASSERT_EQ(l.steps.size(), 1u);
        const sw_graph::LayerSpec &s = l.layers[0];
        EXPECT_EQ(s.generator, "conv_transpose");
        EXPECT_EQ(s.params.at("out_channels"), "8");
        EXPECT_EQ(s.params.at("groups"), "2");
        EXPECT_EQ(s.params.at("stride"), "2");
        EXPECT_EQ(s.params.at("pad_top"), "1");
        EXPECT_EQ(s.params.at("output_padding_y"), "1");
        EXPECT_EQ(l.steps[0].output.extents, (std::vector<int>{14, 10, 8, 2}));
        EXPECT_EQ(l.steps[0].inputs[1].extents, (std::vector<int>{3, 3, 4, 6}));
        ASSERT_EQ(l.extra_constants.count(l.steps[0].inputs[2].tensor), 1u); // zero bias
    }
    {
        ModelBuilder b;
        b.input("x", {1, 2, 3, 3});
        b.init_random("w", {2, 1, 3, 3});
        auto &n = b.node("ConvTranspose", {"x", "w"}, {"y"}, "same");
        ModelBuilder::attr_ints(n, "strides", {2, 2});
        ModelBuilder::attr_s(n, "auto_pad", "SAME_UPPER");
        b.output("y");
        const LoweredGraph l = lower(b);
        EXPECT_EQ(l.steps[0].output.extents, (std::vector<int>{6, 6, 1, 1}));
        EXPECT_EQ(l.layers[0].params.at("pad_left"), "0"); // total 1: 0 before, 1 after
        EXPECT_EQ(l.layers[0].params.at("pad_right"), "1");
    }
    for (const bool three_d : {true, false}) {
        ModelBuilder b;
        b.input("x",
                three_d ? std::vector<int64_t>{1, 2, 3, 3, 3} : std::vector<int64_t>{1, 2, 3, 3});
        b.init_random("w", three_d ? std::vector<int64_t>{2, 1, 2, 2, 2}
                                   : std::vector<int64_t>{2, 1, 2, 2});
        auto &n = b.node("ConvTranspose", {"x", "w"}, {"y"}, "bad_ct");
        if (!three_d)
            ModelBuilder::attr_s(n, "auto_pad", "SAME_MIDDLE");
        b.output("y");
        try {
            lower(b);
            ADD_FAILURE() << "no error";
        } catch (const sw_graph::Error &e) {
            const std::string m = e.what();
            EXPECT_NE(m.find("bad_ct"), std::string::npos) << m;
            EXPECT_NE(m.find(three_d ? "a 3-D ConvTranspose (1-D and 2-D are supported)"
                                     : "attribute auto_pad='SAME_MIDDLE' is not supported"),
                      std::string::npos)
                << m;
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

namespace {

/** The step writing tensor \p t (its index), -1 if none. */
int step_writing(const LoweredGraph &l, const std::string &t) {
    for (size_t i = 0; i < l.steps.size(); i++) {
        if (l.steps[i].output.tensor == t)
            return int(i);
    }
    return -1;
}

} // namespace

// A transformer block as torch.onnx exports one (opset 17): an embedding Gather of int64 ids,
// LayerNormalization, a Linear + exact GELU (Div, Erf, Add, Mul, Mul fused by fuse_gelu, then
// into the dense layer), heads split by Reshape + Transpose, Q.K^T by a computed tensor with
// its Div by sqrt(d) fused as alpha, the int64 attention mask cast and turned into an
// additive mask by Sub and Mul, Softmax, P.V, and a Transpose that moves only a dim of 1 (a
// view).
TEST(Lowering, TransformerBlock) {
    ModelBuilder b(17);
    b.input("ids", {2, 5}, onnx::TensorProto_DataType_INT64);
    b.input("mask", {2, 5}, onnx::TensorProto_DataType_INT64);
    b.init_random("table", {11, 8});
    b.init_random("gamma", {8});
    b.init_random("beta", {8});
    b.init_random("w1", {8, 8});
    b.init_random("b1", {8});
    b.init("sqrt2", {}, {1.4142135f});
    b.init("one", {}, {1.f});
    b.init("half", {}, {0.5f});
    b.init("scale", {}, {2.f});
    b.init("big", {}, {-10000.f});
    b.init_ints("heads", {2, 5, 2, 4});
    b.init_ints("axes", {1, 2});
    b.node("Gather", {"table", "ids"}, {"emb"}, "embed");
    auto &ln = b.node("LayerNormalization", {"emb", "gamma", "beta"}, {"x"}, "ln");
    ModelBuilder::attr_f(ln, "epsilon", 1e-12f);
    b.node("MatMul", {"x", "w1"}, {"h0"}, "fc");
    b.node("Add", {"b1", "h0"}, {"h"}, "fc_bias");
    b.node("Div", {"h", "sqrt2"}, {"d"}, "gelu_div");
    b.node("Erf", {"d"}, {"e"}, "gelu_erf");
    b.node("Add", {"e", "one"}, {"e1"}, "gelu_add");
    b.node("Mul", {"h", "e1"}, {"m"}, "gelu_mul");
    b.node("Mul", {"m", "half"}, {"g"}, "gelu_half");
    b.node("Reshape", {"g", "heads"}, {"r"}, "split_heads");
    auto &tq = b.node("Transpose", {"r"}, {"q"}, "q_t");
    ModelBuilder::attr_ints(tq, "perm", {0, 2, 1, 3});
    auto &tk = b.node("Transpose", {"r"}, {"kt"}, "k_t");
    ModelBuilder::attr_ints(tk, "perm", {0, 2, 3, 1});
    b.node("MatMul", {"q", "kt"}, {"s0"}, "qk");
    b.node("Div", {"s0", "scale"}, {"s"}, "qk_scale");
    b.node("Unsqueeze", {"mask", "axes"}, {"mu"}, "mask_u");
    auto &cast = b.node("Cast", {"mu"}, {"mf"}, "mask_f");
    ModelBuilder::attr_i(cast, "to", onnx::TensorProto_DataType_FLOAT);
    b.node("Sub", {"one", "mf"}, {"inv"}, "mask_inv");
    b.node("Mul", {"inv", "big"}, {"add_mask"}, "mask_big");
    b.node("Add", {"s", "add_mask"}, {"sm"}, "masked");
    auto &sm = b.node("Softmax", {"sm"}, {"p"}, "softmax");
    ModelBuilder::attr_i(sm, "axis", -1);
    b.node("MatMul", {"p", "q"}, {"ctx"}, "pv");
    b.node("Unsqueeze", {"ctx", "axes"}, {"ctx6"}, "ctx_u"); // 2x1x1x2x5x4
    auto &t1 = b.node("Transpose", {"ctx6"}, {"y"}, "ones_move");
    ModelBuilder::attr_ints(t1, "perm", {0, 2, 1, 3, 4, 5});
    b.output("y");
    const LoweredGraph l = lower(b);
    auto layer = [&](const std::string &t) -> const sw_graph::LayerSpec & {
        const int s = step_writing(l, t);
        EXPECT_GE(s, 0) << t;
        return l.layers.at(size_t(l.steps.at(size_t(s)).layer));
    };
    EXPECT_EQ(layer("emb").generator, "gather");
    EXPECT_EQ(layer("emb").params.at("vocab"), "11");
    EXPECT_EQ(layer("emb").params.at("rows"), "10");
    EXPECT_EQ(layer("emb").params.at("size"), "8");
    EXPECT_EQ(layer("x").generator, "layer_norm");
    EXPECT_EQ(layer("x").params.at("rows"), "10");
    EXPECT_EQ(layer("x").params.at("epsilon"), "1e-12");
    // MatMul + Add + GELU: one dense layer.
    EXPECT_EQ(layer("g").generator, "dense");
    EXPECT_EQ(layer("g").params.at("activation"), "gelu");
    EXPECT_EQ(l.steps.at(size_t(step_writing(l, "g"))).op_type, "MatMul+Add+Gelu");
    EXPECT_EQ(step_writing(l, "h"), -1);
    EXPECT_EQ(layer("q").generator, "transpose");
    EXPECT_EQ(layer("q").params.at("shape"), "2,5,2,4");
    EXPECT_EQ(layer("q").params.at("perm"), "0,2,1,3");
    EXPECT_EQ(layer("kt").params.at("perm"), "0,2,3,1");
    // Q.K^T with the Div fused: batch 4 (2 x 2 heads) of 5 x 4 by 4 x 5, alpha 1/2.
    const sw_graph::LayerSpec &qk = layer("s");
    EXPECT_EQ(qk.generator, "batch_matmul");
    EXPECT_EQ(qk.params.at("batch"), "4");
    EXPECT_EQ(qk.params.at("m"), "5");
    EXPECT_EQ(qk.params.at("n"), "5");
    EXPECT_EQ(qk.params.at("k"), "4");
    EXPECT_EQ(qk.params.at("alpha"), "0.5");
    EXPECT_EQ(step_writing(l, "s0"), -1);
    EXPECT_EQ(layer("mf").generator, "cast");
    EXPECT_EQ(layer("inv").generator, "eltwise");
    EXPECT_EQ(layer("inv").params.at("op"), "sub");
    EXPECT_EQ(layer("inv").params.at("a_batch"), "1");
    EXPECT_EQ(layer("sm").params.at("b_channels"), "1"); // the mask broadcast over the heads
    EXPECT_EQ(layer("p").generator, "softmax");
    EXPECT_EQ(layer("p").params.at("batch"), "20");
    EXPECT_EQ(layer("ctx").params.at("alpha"), "1");
    // Views: the mask's Unsqueeze (int64), the Transpose moving no dim of more than 1.
    EXPECT_EQ(l.steps.at(size_t(step_writing(l, "mu"))).layer, -1);
    EXPECT_EQ(l.steps.at(size_t(step_writing(l, "y"))).layer, -1);
}

// A product of two computed tensors whose batch dims broadcast partially ((2, 1) against
// (1, 3)) is refused naming the node.
TEST(Lowering, BatchMatMulPartialBroadcastRefused) {
    ModelBuilder b;
    b.input("a", {2, 1, 4, 5});
    b.input("b", {1, 3, 5, 6});
    b.node("MatMul", {"a", "b"}, {"y"}, "mm");
    b.output("y");
    try {
        lower(b);
        FAIL() << "expected an error";
    } catch (const sw_graph::Error &e) {
        EXPECT_NE(std::string(e.what()).find("node 'mm' (MatMul)"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("broadcast partially"), std::string::npos) << e.what();
    }
}

// A head-split attention as a hand-written (or Hugging Face-style) PyTorch module exports it:
// the heads' Reshape + Transpose of Q, K (perm 0,2,3,1: K^T) and V, Q.K^T, a Div by sqrt(d), the
// additive padding mask (B, 1, 1, N), Softmax, .V and the context's Transpose back: one
// `attention` step reading the projections in (B, S, H, D) and writing the context in (B, M,
// H, D); none of the transposes is made. With fuse_attention off: the separate layers.
TEST(Lowering, AttentionFused) {
    ModelBuilder b(17);
    b.input("q", {2, 5, 6});
    b.input("k", {2, 7, 6});
    b.input("v", {2, 7, 6});
    b.input("mask", {2, 1, 1, 7});
    b.init("scale", {}, {1.7320508f});
    b.init_ints("qh", {2, 5, 2, 3});
    b.init_ints("kh", {2, 7, 2, 3});
    b.init_ints("merged", {2, 5, 6});
    b.node("Reshape", {"q", "qh"}, {"rq"});
    b.node("Reshape", {"k", "kh"}, {"rk"});
    b.node("Reshape", {"v", "kh"}, {"rv"});
    ModelBuilder::attr_ints(b.node("Transpose", {"rq"}, {"tq"}), "perm", {0, 2, 1, 3});
    ModelBuilder::attr_ints(b.node("Transpose", {"rk"}, {"tk"}), "perm", {0, 2, 3, 1});
    ModelBuilder::attr_ints(b.node("Transpose", {"rv"}, {"tv"}), "perm", {0, 2, 1, 3});
    b.node("MatMul", {"tq", "tk"}, {"s0"}, "qk");
    b.node("Div", {"s0", "scale"}, {"s1"});
    b.node("Add", {"s1", "mask"}, {"s2"});
    ModelBuilder::attr_i(b.node("Softmax", {"s2"}, {"p"}), "axis", -1);
    b.node("MatMul", {"p", "tv"}, {"c"}, "pv");
    ModelBuilder::attr_ints(b.node("Transpose", {"c"}, {"ct"}, "merge_heads"), "perm",
                            {0, 2, 1, 3});
    b.node("Reshape", {"ct", "merged"}, {"y"});
    b.output("y");
    sw_graph::LowerOptions on;
    on.fuse_attention = true;
    const LoweredGraph l = lower(b, on);
    int attention = 0, layers = 0;
    for (const sw_graph::Step &s : l.steps) {
        layers += s.layer >= 0;
        if (s.layer < 0 || l.layers[size_t(s.layer)].generator != "attention")
            continue;
        attention++;
        const auto &p = l.layers[size_t(s.layer)].params;
        EXPECT_EQ(s.op_type, "Attention");
        EXPECT_EQ(s.output.tensor, "ct");
        EXPECT_EQ(p.at("batch"), "2");
        EXPECT_EQ(p.at("heads"), "2");
        EXPECT_EQ(p.at("seq_q"), "5");
        EXPECT_EQ(p.at("seq_k"), "7");
        EXPECT_EQ(p.at("head_dim"), "3");
        EXPECT_EQ(std::stof(p.at("alpha")), 1.f / 1.7320508f);
        EXPECT_EQ(p.at("mask"), "add");
        EXPECT_EQ(p.at("mask_batch"), "2");
        EXPECT_EQ(p.at("mask_heads"), "1");
        EXPECT_EQ(p.at("mask_rows"), "1");
        ASSERT_EQ(s.inputs.size(), 4u);
        EXPECT_EQ(s.inputs[0].tensor, "rq");
        EXPECT_EQ(s.inputs[0].extents, (std::vector<int>{3, 2, 5, 2}));
        EXPECT_EQ(s.inputs[1].tensor, "rk");
        EXPECT_EQ(s.inputs[2].tensor, "rv");
        EXPECT_EQ(s.inputs[3].tensor, "mask");
        EXPECT_EQ(s.inputs[3].extents, (std::vector<int>{7, 1, 1, 2}));
    }
    EXPECT_EQ(attention, 1);
    EXPECT_EQ(layers, 1); // the reshapes are views, nothing else is a layer

    sw_graph::LowerOptions off;
    off.fuse_attention = false;
    const LoweredGraph u = lower(b, off);
    int transposes = 0;
    for (const sw_graph::Step &s : u.steps)
        transposes += s.layer >= 0 && u.layers[size_t(s.layer)].generator == "transpose";
    EXPECT_EQ(transposes, 4);
}
