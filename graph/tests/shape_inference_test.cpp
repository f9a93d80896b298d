/** \file
 * ShapeInference on small models built with the protobuf API: the shapes of the issue's
 * operators, folding of PyTorch's flatten idiom, and the errors (unsupported operator and
 * attribute, dynamic inputs without --input-shape).
 */
#include "graph/tests/model_builder.h"

#include "graph/Passes.h"
#include "graph/Stats.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace sw_graph;
using sw_graph_test::ModelBuilder;
using Dims = std::vector<int64_t>;

namespace {

Dims shape_of(const Graph &g, const std::string &n) {
    return g.tensor(n).shape;
}

std::string error_of(const ModelBuilder &m, const InferenceOptions &o = {}) {
    try {
        m.infer(o);
    } catch (const Error &e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST(GraphShapes, ConvBnRelu) {
    ModelBuilder m;
    m.input("x", {1, 3, 32, 32});
    m.init_random("w", {16, 3, 3, 3});
    m.init_random("b", {16});
    auto &conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv1");
    ModelBuilder::attr_ints(conv, "pads", {1, 1, 1, 1});
    ModelBuilder::attr_ints(conv, "strides", {2, 2});
    for (const char *p : {"gamma", "beta", "mean"})
        m.init_random(p, {16});
    m.init_random("var", {16}, 0.5f, 2.0f);
    m.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, "bn1");
    m.node("Relu", {"bn"}, {"y"}, "relu1");
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(shape_of(g, "c"), (Dims{1, 16, 16, 16}));
    EXPECT_EQ(shape_of(g, "y"), (Dims{1, 16, 16, 16}));
    EXPECT_EQ(node_macs(g, g.nodes[0]), 16LL * 16 * 16 * 3 * 3 * 3);
    run_passes(g);
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].op_type, "Conv");
    EXPECT_EQ(g.nodes[0].output(0), "bn");
    EXPECT_EQ(g.nodes[1].op_type, "Relu");
    EXPECT_EQ(graph_stats(g).params, 16 * 27 + 16);
}

TEST(GraphShapes, ConvGroupsDilationsAsymmetricPadsAutoPad) {
    ModelBuilder m;
    m.input("x", {2, 8, 17, 20});
    m.init_random("dw", {8, 1, 3, 3});
    auto &dw = m.node("Conv", {"x", "dw"}, {"a"}, "depthwise");
    ModelBuilder::attr_i(dw, "group", 8);
    ModelBuilder::attr_ints(dw, "dilations", {2, 2});
    ModelBuilder::attr_ints(dw, "pads", {0, 1, 2, 3});
    m.init_random("w", {12, 4, 3, 3});
    auto &same = m.node("Conv", {"a", "w"}, {"b"}, "grouped");
    ModelBuilder::attr_i(same, "group", 2);
    ModelBuilder::attr_s(same, "auto_pad", "SAME_UPPER");
    ModelBuilder::attr_ints(same, "strides", {2, 3});
    m.output("b");
    Graph g = m.infer();
    // H: 17 + 0 + 2 - 5 + 1 = 15; W: 20 + 1 + 3 - 5 + 1 = 20.
    EXPECT_EQ(shape_of(g, "a"), (Dims{2, 8, 15, 20}));
    // SAME_UPPER: ceil(15 / 2) = 8, ceil(20 / 3) = 7.
    EXPECT_EQ(shape_of(g, "b"), (Dims{2, 12, 8, 7}));
    // The pads are explicit now: H total (8-1)*2+3-15 = 2 -> 1, 1; W (7-1)*3+3-20 = 1 -> 0, 1.
    EXPECT_EQ(g.nodes[1].attr_ints("pads", {}), (Dims{1, 0, 1, 1}));
    EXPECT_FALSE(g.nodes[1].has_attr("auto_pad"));
    EXPECT_EQ(g.nodes[1].attr_ints("kernel_shape", {}), (Dims{3, 3}));
}

TEST(GraphShapes, ResidualAddWithBroadcasting) {
    ModelBuilder m;
    m.input("x", {1, 8, 5, 5});
    m.init_random("w", {8, 8, 3, 3});
    auto &conv = m.node("Conv", {"x", "w"}, {"c"});
    ModelBuilder::attr_ints(conv, "pads", {1, 1, 1, 1});
    m.node("Add", {"c", "x"}, {"s"});
    m.init_random("k", {8, 1, 1});
    m.node("Mul", {"s", "k"}, {"y"});
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(shape_of(g, "s"), (Dims{1, 8, 5, 5}));
    EXPECT_EQ(shape_of(g, "y"), (Dims{1, 8, 5, 5}));
}

TEST(GraphShapes, BroadcastMismatchNamesNode) {
    ModelBuilder m;
    m.input("x", {1, 8, 5, 5});
    m.input("z", {1, 7, 5, 5});
    m.node("Add", {"x", "z"}, {"y"}, "add1");
    m.output("y");
    EXPECT_NE(
        error_of(m).find(
            "error: test.onnx: node 'add1' (Add): shapes 1x8x5x5 and 1x7x5x5 do not broadcast"),
        std::string::npos)
        << error_of(m);
}

TEST(GraphShapes, ConcatAndSplitChannelShuffle) {
    ModelBuilder m;
    m.input("a", {1, 4, 6, 6});
    m.input("b", {1, 12, 6, 6});
    auto &cat = m.node("Concat", {"a", "b"}, {"c"});
    ModelBuilder::attr_i(cat, "axis", 1);
    m.init_ints("shape1", {1, 2, 8, 6, 6});
    m.node("Reshape", {"c", "shape1"}, {"r"});
    auto &t = m.node("Transpose", {"r"}, {"t"});
    ModelBuilder::attr_ints(t, "perm", {0, 2, 1, 3, 4});
    m.init_ints("shape2", {1, -1, 6, 6});
    m.node("Reshape", {"t", "shape2"}, {"s"});
    m.init_ints("split", {6, 10});
    auto &sp = m.node("Split", {"s", "split"}, {"p", "q"});
    ModelBuilder::attr_i(sp, "axis", 1);
    m.output("p");
    m.output("q");
    Graph g = m.infer();
    EXPECT_EQ(shape_of(g, "c"), (Dims{1, 16, 6, 6}));
    EXPECT_EQ(shape_of(g, "t"), (Dims{1, 8, 2, 6, 6}));
    EXPECT_EQ(shape_of(g, "s"), (Dims{1, 16, 6, 6}));
    EXPECT_EQ(shape_of(g, "p"), (Dims{1, 6, 6, 6}));
    EXPECT_EQ(shape_of(g, "q"), (Dims{1, 10, 6, 6}));
}

TEST(GraphShapes, PoolingCeilModeAndPads) {
    ModelBuilder m;
    m.input("x", {1, 3, 112, 112});
    auto &mp = m.node("MaxPool", {"x"}, {"a"});
    ModelBuilder::attr_ints(mp, "kernel_shape", {3, 3});
    ModelBuilder::attr_ints(mp, "strides", {2, 2});
    ModelBuilder::attr_i(mp, "ceil_mode", 1);
    auto &ap = m.node("AveragePool", {"a"}, {"b"});
    ModelBuilder::attr_ints(ap, "kernel_shape", {3, 3});
    ModelBuilder::attr_ints(ap, "strides", {2, 2});
    ModelBuilder::attr_ints(ap, "pads", {1, 1, 1, 1});
    ModelBuilder::attr_i(ap, "ceil_mode", 1);
    ModelBuilder::attr_i(ap, "count_include_pad", 0);
    m.node("GlobalAveragePool", {"b"}, {"c"});
    m.output("c");
    Graph g = m.infer();
    // ceil((112 - 3) / 2) + 1 = 56 (floor would give 55).
    EXPECT_EQ(shape_of(g, "a"), (Dims{1, 3, 56, 56}));
    // ceil((56 + 2 - 3) / 2) + 1 = 29: the last window starts at padded 56, input 55.
    EXPECT_EQ(shape_of(g, "b"), (Dims{1, 3, 29, 29}));
    EXPECT_EQ(shape_of(g, "c"), (Dims{1, 3, 1, 1}));

    // 5 wide, kernel 2, stride 2, pads 1: ceil((5 + 2 - 2) / 2) + 1 = 4, but the 4th window
    // would start at padded 6 = 5 + 1, in the right padding only: 3 (as PyTorch).
    ModelBuilder m2;
    m2.input("x", {1, 1, 5, 5});
    auto &p2 = m2.node("MaxPool", {"x"}, {"y"});
    ModelBuilder::attr_ints(p2, "kernel_shape", {2, 2});
    ModelBuilder::attr_ints(p2, "strides", {2, 2});
    ModelBuilder::attr_ints(p2, "pads", {1, 1, 1, 1});
    ModelBuilder::attr_i(p2, "ceil_mode", 1);
    m2.output("y");
    EXPECT_EQ(shape_of(m2.infer(), "y"), (Dims{1, 1, 3, 3}));
}

TEST(GraphShapes, FlattenIdiomFoldsToStaticReshape) {
    // PyTorch's x.view(x.size(0), -1): Shape -> Gather(0) -> Unsqueeze, Concat with [-1],
    // Reshape.
    ModelBuilder m(13);
    m.input("x", {2, 16, 3, 3});
    m.node("Shape", {"x"}, {"shape"});
    auto &c0 = m.node("Constant", {}, {"zero"});
    auto *a = c0.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto_DataType_INT64);
    a->mutable_t()->add_int64_data(0);
    auto &gather = m.node("Gather", {"shape", "zero"}, {"n"});
    ModelBuilder::attr_i(gather, "axis", 0);
    m.init_ints("axes", {0});
    m.node("Unsqueeze", {"n", "axes"}, {"n1"});
    m.init_ints("minus1", {-1});
    auto &cat = m.node("Concat", {"n1", "minus1"}, {"target"});
    ModelBuilder::attr_i(cat, "axis", 0);
    m.node("Reshape", {"x", "target"}, {"flat"}, "view");
    m.init_random("fc_w", {10, 144});
    m.init_random("fc_b", {10});
    auto &gemm = m.node("Gemm", {"flat", "fc_w", "fc_b"}, {"y"}, "fc");
    ModelBuilder::attr_i(gemm, "transB", 1);
    m.output("y");
    Graph g = m.infer();
    ASSERT_EQ(g.nodes.size(), 2u) << g.dump();
    EXPECT_EQ(g.nodes[0].op_type, "Reshape");
    const Tensor &target = g.tensor(g.nodes[0].input(1));
    EXPECT_TRUE(target.is_constant);
    EXPECT_EQ(target.i64, (Dims{2, -1}));
    EXPECT_EQ(shape_of(g, "flat"), (Dims{2, 144}));
    EXPECT_EQ(shape_of(g, "y"), (Dims{2, 10}));
    EXPECT_EQ(node_macs(g, g.nodes[1]), 2 * 10 * 144);
    eliminate_dead_nodes(g);
    EXPECT_EQ(g.find("shape"), nullptr); // the folded shape tensors are gone
}

TEST(GraphShapes, ReshapeZeroAndMinusOne) {
    ModelBuilder m;
    m.input("x", {2, 3, 4, 5});
    m.init_ints("s", {0, -1, 5});
    m.node("Reshape", {"x", "s"}, {"y"});
    m.output("y");
    EXPECT_EQ(shape_of(m.infer(), "y"), (Dims{2, 12, 5}));
}

TEST(GraphShapes, GemmTransAMatMulFlattenReduceMeanSqueeze) {
    ModelBuilder m;
    m.input("x", {4, 8, 3, 3});
    auto &rm = m.node("ReduceMean", {"x"}, {"r"});
    ModelBuilder::attr_ints(rm, "axes", {2, 3});
    ModelBuilder::attr_i(rm, "keepdims", 1);
    m.init_ints("axes", {2, 3});
    m.node("Squeeze", {"r", "axes"}, {"s"});
    m.init_random("a", {8, 4});
    auto &gemm = m.node("Gemm", {"a", "s"}, {"g"});
    ModelBuilder::attr_i(gemm, "transA", 1);
    ModelBuilder::attr_i(gemm, "transB", 1);
    m.init_random("b", {3, 4, 5});
    m.node("MatMul", {"g", "b"}, {"mm"});
    auto &fl = m.node("Flatten", {"mm"}, {"y"});
    ModelBuilder::attr_i(fl, "axis", 2);
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(shape_of(g, "r"), (Dims{4, 8, 1, 1}));
    EXPECT_EQ(shape_of(g, "s"), (Dims{4, 8}));
    EXPECT_EQ(shape_of(g, "g"), (Dims{4, 4})); // (8x4)^T x (4x8)^T
    EXPECT_EQ(shape_of(g, "mm"), (Dims{3, 4, 5}));
    EXPECT_EQ(shape_of(g, "y"), (Dims{12, 5}));
}

TEST(GraphShapes, ActivationsSoftmaxLrnDropoutIdentity) {
    ModelBuilder m(12);
    m.input("x", {1, 6, 4, 4});
    m.node("Sigmoid", {"x"}, {"a"});
    auto &lr = m.node("LeakyRelu", {"a"}, {"b"});
    ModelBuilder::attr_f(lr, "alpha", 0.2f);
    m.init("lo", {}, {0.0f});
    m.init("hi", {}, {6.0f});
    m.node("Clip", {"b", "lo", "hi"}, {"c"});
    auto &lrn = m.node("LRN", {"c"}, {"d"});
    ModelBuilder::attr_i(lrn, "size", 5);
    m.node("Dropout", {"d"}, {"e"});
    m.node("Identity", {"e"}, {"f"});
    auto &sm = m.node("Softmax", {"f"}, {"y"});
    ModelBuilder::attr_i(sm, "axis", 1);
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(shape_of(g, "y"), (Dims{1, 6, 4, 4}));
    EXPECT_EQ(remove_identities(g), 2);
    EXPECT_EQ(g.nodes.size(), 5u);
    EXPECT_EQ(g.nodes.back().input(0), "d");
}

TEST(GraphShapes, SliceClampsNegativesStepsAndFolds) {
    ModelBuilder m;
    m.input("x", {2, 10, 7, 5});
    // Channels 2..-1 (2..8), rows from the end backwards with step -2 (6, 4, 2, 0), width
    // clamped (0..INT64_MAX).
    m.init_ints("starts", {2, -1, 0});
    m.init_ints("ends", {-2, -100, 9223372036854775807LL});
    m.init_ints("axes", {1, -2, 3});
    m.init_ints("steps", {1, -2, 1});
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "s1");
    // A constant slice folds: elements 1..2 of [7, 20, 12, 99].
    m.init_ints("c", {7, 20, 12, 99});
    m.init_ints("cs", {1});
    m.init_ints("ce", {3});
    m.node("Slice", {"c", "cs", "ce"}, {"cy"}, "s2");
    m.node("Reshape", {"y", "cy"}, {"r"}, "reshape");
    m.output("r");
    Graph g = m.infer();
    EXPECT_EQ(shape_of(g, "y"), (Dims{2, 6, 4, 5}));
    const SliceBox box = slice_box(g, g.nodes[g.producer("y")]);
    EXPECT_EQ(box.begin, (Dims{0, 2, 6, 0}));
    EXPECT_EQ(box.step, (Dims{1, 1, -2, 1}));
    ASSERT_TRUE(g.tensor("cy").is_constant);
    EXPECT_EQ(g.tensor("cy").i64, (Dims{20, 12}));
    EXPECT_EQ(shape_of(g, "r"), (Dims{20, 12}));
}

TEST(GraphShapes, PadShapeAndZeroPadRemoved) {
    ModelBuilder m;
    m.input("x", {1, 3, 4, 5});
    m.init_ints("p1", {0, 0, 1, 2, 0, 0, 3, 0});
    m.node("Pad", {"x", "p1"}, {"a"}, "pad1");
    m.init_ints("p0", {0, 0, 0, 0, 0, 0, 0, 0});
    m.node("Pad", {"a", "p0"}, {"y"}, "pad0");
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(shape_of(g, "a"), (Dims{1, 3, 8, 7}));
    EXPECT_EQ(shape_of(g, "y"), (Dims{1, 3, 8, 7}));
    run_passes(g);
    ASSERT_EQ(g.nodes.size(), 1u); // the zero Pad is gone, its reader reads "a"
    EXPECT_EQ(g.nodes[0].name, "pad1");
    EXPECT_EQ(g.nodes[0].output(0), "y");
}

TEST(GraphShapes, ChannelShuffleFused) {
    ModelBuilder m;
    m.input("x", {1, 6, 2, 3});
    m.init_ints("s5", {1, 3, 2, 2, 3});
    m.init_ints("s4", {1, 6, 2, 3});
    m.node("Reshape", {"x", "s5"}, {"v"}, "view1");
    auto &t = m.node("Transpose", {"v"}, {"t"}, "transpose");
    ModelBuilder::attr_ints(t, "perm", {0, 2, 1, 3, 4});
    m.node("Reshape", {"t", "s4"}, {"y"}, "view2");
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(fuse_channel_shuffle(g), 1);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op_type, "ChannelShuffle");
    EXPECT_EQ(g.nodes[0].domain, kInternalDomain);
    EXPECT_EQ(g.nodes[0].attr_int("groups", 0), 3);
    EXPECT_EQ(g.nodes[0].input(0), "x");
    EXPECT_EQ(g.nodes[0].output(0), "y");
    EXPECT_FALSE(g.find("v"));
}

TEST(GraphShapes, ConcatFusedIntoTheShuffleWhenEachInputIsOneGroup) {
    // Three inputs of 2 channels each, concatenated and shuffled in 3 groups.
    ModelBuilder m;
    for (const char *in : {"a", "b", "c"})
        m.input(in, {2, 2, 2, 3});
    auto &cat = m.node("Concat", {"a", "b", "c"}, {"x"}, "concat");
    ModelBuilder::attr_i(cat, "axis", 1);
    m.init_ints("s5", {2, 3, 2, 2, 3});
    m.init_ints("s4", {2, 6, 2, 3});
    m.node("Reshape", {"x", "s5"}, {"v"}, "view1");
    auto &t = m.node("Transpose", {"v"}, {"t"}, "transpose");
    ModelBuilder::attr_ints(t, "perm", {0, 2, 1, 3, 4});
    m.node("Reshape", {"t", "s4"}, {"y"}, "view2");
    m.output("y");
    Graph g = m.infer();
    EXPECT_EQ(fuse_channel_shuffle(g), 1);
    EXPECT_EQ(fuse_concat_into_shuffle(g), 1);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op_type, "ChannelShuffle");
    EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_FALSE(g.find("x"));
    infer_shapes(g); // one input per group: the output has all the channels
    EXPECT_EQ(shape_of(g, "y"), (Dims{2, 6, 2, 3}));
    // Groups that are not one input each stay a Concat.
    ModelBuilder m2;
    m2.input("a", {1, 4, 2, 3});
    m2.input("b", {1, 2, 2, 3});
    auto &cat2 = m2.node("Concat", {"a", "b"}, {"x"}, "concat");
    ModelBuilder::attr_i(cat2, "axis", 1);
    m2.init_ints("s5", {1, 2, 3, 2, 3});
    m2.init_ints("s4", {1, 6, 2, 3});
    m2.node("Reshape", {"x", "s5"}, {"v"}, "view1");
    auto &t2 = m2.node("Transpose", {"v"}, {"t"}, "transpose");
    ModelBuilder::attr_ints(t2, "perm", {0, 2, 1, 3, 4});
    m2.node("Reshape", {"t", "s4"}, {"y"}, "view2");
    m2.output("y");
    Graph g2 = m2.infer();
    EXPECT_EQ(fuse_channel_shuffle(g2), 1);
    EXPECT_EQ(fuse_concat_into_shuffle(g2), 0);
    EXPECT_EQ(g2.nodes.size(), 2u);
}

// torch.onnx's HardSwish below opset 14: HardSigmoid(x) then Mul(x, .), fused into one
// HardSwish with the HardSigmoid's alpha and beta; a Mul by something else is not.
TEST(GraphShapes, HardSigmoidMulFusedIntoHardSwish) {
    ModelBuilder m;
    m.input("x", {2, 3, 4, 5});
    auto &h = m.node("HardSigmoid", {"x"}, {"h"}, "hsig");
    ModelBuilder::attr_f(h, "alpha", 1.f / 6.f);
    m.node("Mul", {"h", "x"}, {"y"}, "mul");
    auto &h2 = m.node("HardSigmoid", {"y"}, {"h2"}, "hsig2"); // defaults 0.2, 0.5
    m.node("Mul", {"h2", "x"}, {"z"}, "mul2");                // not y * hardsigmoid(y)
    m.output("z");
    Graph g = m.infer();
    EXPECT_EQ(shape_of(g, "h2"), (Dims{2, 3, 4, 5}));
    EXPECT_EQ(fuse_hard_swish(g), 1);
    ASSERT_EQ(g.nodes.size(), 3u); // hsig is dead
    const Node &hs = g.nodes[0];
    EXPECT_EQ(hs.op_type, "HardSwish");
    EXPECT_EQ(hs.domain, kInternalDomain);
    EXPECT_EQ(hs.name, "mul");
    EXPECT_EQ(hs.inputs, (std::vector<std::string>{"x"}));
    EXPECT_EQ(hs.output(0), "y");
    EXPECT_FLOAT_EQ(hs.attr_float("alpha", 0), 1.f / 6.f);
    EXPECT_FLOAT_EQ(hs.attr_float("beta", 0), 0.5f);
    EXPECT_EQ(g.nodes[1].op_type, "HardSigmoid");
    EXPECT_EQ(g.nodes[2].op_type, "Mul");
    infer_shapes(g); // the fused node has a rule too
    EXPECT_EQ(shape_of(g, "y"), (Dims{2, 3, 4, 5}));
    // Its output read by another node too: not fused.
    ModelBuilder m2;
    m2.input("x", {1, 3, 4, 4});
    m2.node("HardSigmoid", {"x"}, {"h"}, "hsig");
    m2.node("Mul", {"x", "h"}, {"y"}, "mul");
    m2.node("Add", {"y", "h"}, {"z"}, "add");
    m2.output("z");
    Graph g2 = m2.infer();
    EXPECT_EQ(fuse_hard_swish(g2), 0);
}

// HardSigmoid's alpha and beta must be finite; other attributes are refused by name.
TEST(GraphShapes, HardSigmoidBadAttributesNameNodeAndAttribute) {
    ModelBuilder m;
    m.input("x", {1, 3, 4, 4});
    auto &h = m.node("HardSigmoid", {"x"}, {"y"}, "hs");
    ModelBuilder::attr_f(h, "beta", NAN);
    m.output("y");
    EXPECT_EQ(error_of(m).rfind("error: test.onnx: node 'hs' (HardSigmoid): attribute 'beta' of "
                                "HardSigmoid is nan (a finite value is supported)",
                                0),
              0u)
        << error_of(m);
    ModelBuilder m2;
    m2.input("x", {1, 3, 4, 4});
    auto &h2 = m2.node("HardSigmoid", {"x"}, {"y"}, "hs");
    ModelBuilder::attr_f(h2, "alpha", INFINITY);
    m2.output("y");
    EXPECT_NE(error_of(m2).find("node 'hs' (HardSigmoid): attribute 'alpha' of HardSigmoid is inf"),
              std::string::npos)
        << error_of(m2);
    ModelBuilder m3;
    m3.input("x", {1, 3, 4, 4});
    auto &h3 = m3.node("HardSwish", {"x"}, {"y"}, "hsw");
    ModelBuilder::attr_f(h3, "alpha", 0.2f);
    m3.output("y");
    EXPECT_NE(error_of(m3).find("node 'hsw' (HardSwish): attribute 'alpha' of HardSwish is not "
                                "supported"),
              std::string::npos)
        << error_of(m3);
    ModelBuilder m4;
    m4.input("x", {1, 3, 4, 4});
    auto &h4 = m4.node("HardSigmoid", {"x"}, {"y"}, "hs");
    ModelBuilder::attr_i(h4, "alpha", 1); // an int, not a float
    m4.output("y");
    EXPECT_NE(error_of(m4).find("node 'hs' (HardSigmoid)"), std::string::npos) << error_of(m4);
    EXPECT_NE(error_of(m4).find("alpha"), std::string::npos) << error_of(m4);
}

TEST(GraphShapes, UnsupportedOperatorNamesNodeAndOp) {
    ModelBuilder m;
    m.input("x", {1, 3, 4, 4});
    m.node("Relu", {"x"}, {"a"});
    m.node("Acosh", {"a"}, {"y"}, "act2");
    m.output("y");
    const std::string e = error_of(m);
    EXPECT_EQ(
        e.rfind("error: test.onnx: node 'act2' (Acosh): operator 'Acosh' is not supported", 0), 0u)
        << e;
    EXPECT_NE(e.find("Conv"), std::string::npos) << e; // lists what is supported
}

TEST(GraphShapes, UnsupportedAttributeAndValue) {
    ModelBuilder m;
    m.input("x", {1, 3, 4, 4});
    auto &mp = m.node("MaxPool", {"x"}, {"y"});
    ModelBuilder::attr_ints(mp, "kernel_shape", {2, 2});
    ModelBuilder::attr_i(mp, "storage_order", 1);
    m.output("y");
    EXPECT_NE(error_of(m).find("node #0 (MaxPool, output 'y'): storage_order=1 is not supported"),
              std::string::npos)
        << error_of(m);
    ModelBuilder m2;
    m2.input("x", {1, 3, 4, 4});
    auto &relu = m2.node("Relu", {"x"}, {"y"}, "r");
    ModelBuilder::attr_f(relu, "alpha", 1.0f);
    m2.output("y");
    EXPECT_NE(error_of(m2).find("node 'r' (Relu): attribute 'alpha' of Relu is not supported"),
              std::string::npos)
        << error_of(m2);
    ModelBuilder m3;
    m3.input("x", {1, 3, 4, 4});
    auto &mp3 = m3.node("MaxPool", {"x"}, {"y", "indices"}, "mp");
    ModelBuilder::attr_ints(mp3, "kernel_shape", {2, 2});
    m3.output("y");
    EXPECT_NE(
        error_of(m3).find("node 'mp' (MaxPool): output 1 ('indices') of MaxPool is not supported"),
        std::string::npos)
        << error_of(m3);
    ModelBuilder m4;
    m4.input("x", {1, 3, 4, 4});
    m4.node("AveragePool", {"x"}, {"y"}, "ap");
    m4.output("y");
    EXPECT_NE(error_of(m4).find("node 'ap' (AveragePool): attribute 'kernel_shape' is required"),
              std::string::npos)
        << error_of(m4);
}

TEST(GraphShapes, DynamicInputNeedsInputShape) {
    ModelBuilder m;
    m.input("image", {-1, 3, 8, 8});
    m.node("Relu", {"image"}, {"y"});
    m.output("y");
    const std::string e = error_of(m);
    EXPECT_EQ(e.rfind("error: test.onnx: input 'image' has a dynamic dimension (dim 0 of ?x3x8x8); "
                      "give --input-shape image=1x3x8x8",
                      0),
              0u)
        << e;
    InferenceOptions o;
    add_input_shape("image=5x3x8x8", o);
    EXPECT_EQ(m.infer(o).tensor("y").shape, (Dims{5, 3, 8, 8}));
    InferenceOptions bad;
    add_input_shape("image=5x4x8x8", bad);
    EXPECT_NE(error_of(m, bad).find("does not match the model's declared shape ?x3x8x8"),
              std::string::npos);
    InferenceOptions wrong_name;
    add_input_shape("img=1x3x8x8", wrong_name);
    EXPECT_NE(error_of(m, wrong_name).find("the model has no input 'img' (its inputs: 'image')"),
              std::string::npos);
    InferenceOptions o2;
    EXPECT_THROW(add_input_shape("image=1x3xx8", o2), Error);
    EXPECT_THROW(add_input_shape("image", o2), Error);
    EXPECT_THROW(add_input_shape("image=0x3", o2), Error);
}

TEST(GraphShapes, HugeInputShapeFailsCleanly) {
    ModelBuilder m;
    m.input("x", {-1, -1, -1, -1});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    InferenceOptions o;
    add_input_shape("x=100000000000x100000000000x3x8", o);
    EXPECT_NE(error_of(m, o).find("more elements than int64 holds"), std::string::npos)
        << error_of(m, o);
}

TEST(GraphShapes, NonConstantReshapeShapeIsAnError) {
    ModelBuilder m;
    m.input("x", {2, 6});
    m.input("s", {2}, onnx::TensorProto_DataType_INT64);
    m.node("Reshape", {"x", "s"}, {"y"}, "rs");
    m.output("y");
    EXPECT_NE(error_of(m).find("node 'rs' (Reshape): shape (input 's') is not a constant"),
              std::string::npos)
        << error_of(m);
}

TEST(GraphShapes, DeclaredOutputShapeIsChecked) {
    ModelBuilder m;
    m.input("x", {1, 3, 8, 8});
    m.node("Relu", {"x"}, {"y"});
    auto *o = m.g->add_output();
    o->set_name("y");
    auto *t = o->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : {1, 3, 8, 9})
        t->mutable_shape()->add_dim()->set_dim_value(d);
    EXPECT_NE(error_of(m).find("the inferred shape 1x3x8x8 differs from the declared 1x3x8x9"),
              std::string::npos);
}

// LayerNormalization (opset 17): the output has X's shape; Scale must be the normalised
// dims; training outputs and another stash type are refused naming the node. A computed
// int64 tensor casts to float32 only; a constant Transpose (a weight) is folded.
TEST(GraphShapes, LayerNormCastAndConstantTranspose) {
    ModelBuilder m(17);
    m.input("x", {2, 3, 4});
    m.input("ids", {2, 3}, onnx::TensorProto_DataType_INT64);
    m.init("s", {4}, {1, 2, 3, 4});
    m.init("w", {2, 3}, {1, 2, 3, 4, 5, 6});
    auto &ln = m.node("LayerNormalization", {"x", "s"}, {"y"}, "ln");
    ModelBuilder::attr_f(ln, "epsilon", 1e-6f);
    auto &c = m.node("Cast", {"ids"}, {"f"}, "cast");
    ModelBuilder::attr_i(c, "to", onnx::TensorProto_DataType_FLOAT);
    m.node("Transpose", {"w"}, {"wt"}, "t");
    m.node("MatMul", {"f", "wt"}, {"z"}, "mm");
    m.output("y");
    m.output("z");
    Graph g = m.infer();
    EXPECT_EQ(g.tensor("y").shape, (Dims{2, 3, 4}));
    EXPECT_EQ(g.tensor("f").dtype, DType::Float32);
    const Tensor &wt = g.tensor("wt");
    ASSERT_TRUE(wt.is_constant);
    EXPECT_EQ(wt.shape, (Dims{3, 2}));
    EXPECT_EQ(wt.f32, (std::vector<float>{1, 4, 2, 5, 3, 6}));

    ModelBuilder bad(17);
    bad.input("x", {2, 3, 4});
    bad.init("s", {3}, {1, 2, 3});
    bad.node("LayerNormalization", {"x", "s"}, {"y"}, "ln_bad");
    bad.output("y");
    const std::string e = error_of(bad);
    EXPECT_NE(e.find("ln_bad"), std::string::npos) << e;
    EXPECT_NE(e.find("Scale 3 is not the normalised shape 4"), std::string::npos) << e;

    ModelBuilder back(17);
    back.input("x", {2, 3});
    auto &c2 = back.node("Cast", {"x"}, {"i"}, "to_int");
    ModelBuilder::attr_i(c2, "to", onnx::TensorProto_DataType_INT64);
    back.output("i");
    const std::string e2 = error_of(back);
    EXPECT_NE(e2.find("to_int"), std::string::npos) << e2;
    EXPECT_NE(e2.find("int64 to float32 is"), std::string::npos) << e2;
}
