/** \file
 * ConcatInPlace (graph/ConcatInPlace.h) run on the emulator against the naive references:
 * a GoogLeNet-like inception (branch outputs written into their slices, the concat's output
 * nested in a later concat), DenseNet-like growing concats (a block's concats are ranges of
 * one buffer; the last has 9 inputs, more than one concat layer takes), a concat input read
 * by other nodes too, a graph input and a repeated input (copied into their slices), batch
 * 2 (every concat keeps its copying layer), odd channel counts and planes; and an exported
 * folder with in-place concats built with make emu and run, its output equal to the
 * Executor's bit for bit.
 */
#include "graph/ConcatInPlace.h"
#include "graph/Executor.h"
#include "graph/Export.h"
#include "graph/Passes.h"
#include "graph/tests/model_builder.h"
#include "reference/naive_layers.h"
#include "runtime/io/npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

using sw_graph_test::ModelBuilder;
using sw_graph_test::random_values;

void expect_close(const std::vector<float> &actual, const std::vector<float> &expected,
                  const std::string &what) {
    ASSERT_EQ(actual.size(), expected.size()) << what;
    int bad = 0;
    for (size_t i = 0; i < actual.size(); i++) {
        const double d = std::fabs(double(actual[i]) - expected[i]);
        if (!(d <= 1e-4 + 1e-4 * std::fabs(expected[i]))) {
            if (bad++ < 5)
                ADD_FAILURE() << what << "[" << i << "]: " << actual[i] << " vs " << expected[i];
        }
    }
    EXPECT_EQ(bad, 0) << what;
}

/** Hand schedules (quicker to build than autoscheduled ones) through a cache shared by the
 * tests of this file. */
sw_graph::ExecOptions options(bool in_place = true) {
    sw_graph::ExecOptions o;
    o.schedule = "hand";
    o.cache_dir = ::testing::TempDir() + "/sw_concat_in_place_cache";
    o.concat_in_place = in_place;
    return o;
}

sw_graph::Graph graph_of(const ModelBuilder &b) {
    sw_graph::Graph g = b.infer();
    sw_graph::run_passes(g);
    return g;
}

int steps_with_op(const sw_graph::LoweredGraph &lw, const std::string &op) {
    int n = 0;
    for (const sw_graph::Step &s : lw.steps)
        n += s.op_type == op;
    return n;
}

int concat_layers(const sw_graph::LoweredGraph &lw) {
    int n = 0;
    for (const sw_graph::LayerSpec &l : lw.layers)
        n += l.generator == "concat";
    return n;
}

/** A Conv node with k x k kernel, pad k / 2, random weights and bias. */
struct Conv {
    std::vector<float> w, b;
    int ci, co, k;
    Conv(ModelBuilder &m, const std::string &in, const std::string &out, int ci_, int co_, int k_)
        : ci(ci_), co(co_), k(k_) {
        w = m.init_random(out + "_w", {co, ci, k, k}, -0.4f, 0.4f);
        b = m.init_random(out + "_b", {co});
        auto &n = m.node("Conv", {in, out + "_w", out + "_b"}, {out}, out);
        ModelBuilder::attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
    }
    std::vector<float> ref(const std::vector<float> &x, int n, int h, int w_, bool relu) const {
        return reference::conv2d(
            reference::Conv2DParams::square(n, ci, co, h, w_, k, 1, k / 2, relu), x, w, b);
    }
};

onnx::NodeProto &concat_node(ModelBuilder &m, const std::vector<std::string> &in,
                             const std::string &out) {
    auto &c = m.node("Concat", in, {out}, out);
    ModelBuilder::attr_i(c, "axis", 1);
    return c;
}

// ------------------------------------------------- GoogLeNet-like inception, nested concat

/** x (N, 3, 5, 7) -> four branches (1x1 conv+relu: 4; 1x1 conv 3 -> 3x3 conv+relu 5; 3x3 max
 * pool stride 1 pad 1 -> 1x1 conv+relu 3; 3x3 conv+relu 1) -> inc (13 channels); out =
 * Concat(MaxPool(inc), inc): inc is itself an input of a later concat. */
struct Inception {
    static constexpr int C = 3, H = 5, W = 7;
    int n;
    ModelBuilder m;
    std::unique_ptr<Conv> b1, b2a, b2b, b3, b4;

    explicit Inception(int batch) : n(batch) {
        m.input("x", {n, C, H, W});
        b1 = std::make_unique<Conv>(m, "x", "b1", C, 4, 1);
        m.node("Relu", {"b1"}, {"r1"}, "relu1");
        b2a = std::make_unique<Conv>(m, "x", "b2a", C, 3, 1);
        b2b = std::make_unique<Conv>(m, "b2a", "b2b", 3, 5, 3);
        m.node("Relu", {"b2b"}, {"r2"}, "relu2");
        auto &p = m.node("MaxPool", {"x"}, {"p3"}, "pool3");
        ModelBuilder::attr_ints(p, "kernel_shape", {3, 3});
        ModelBuilder::attr_ints(p, "pads", {1, 1, 1, 1});
        b3 = std::make_unique<Conv>(m, "p3", "b3", C, 3, 1);
        m.node("Relu", {"b3"}, {"r3"}, "relu3");
        b4 = std::make_unique<Conv>(m, "x", "b4", C, 1, 3);
        m.node("Relu", {"b4"}, {"r4"}, "relu4");
        concat_node(m, {"r1", "r2", "r3", "r4"}, "inc");
        auto &q = m.node("MaxPool", {"inc"}, {"pinc"}, "pool_inc");
        ModelBuilder::attr_ints(q, "kernel_shape", {3, 3});
        ModelBuilder::attr_ints(q, "pads", {1, 1, 1, 1});
        concat_node(m, {"pinc", "inc"}, "out");
        m.output("out");
    }

    std::vector<float> reference(const std::vector<float> &x) const {
        using namespace reference;
        const PoolParams pp{n, C, H, W, 3, 3, 1, 1, 1, 1, 1, 1, false, true, false};
        const auto inc =
            concat(n, H, W, {4, 5, 3, 1},
                   {b1->ref(x, n, H, W, true), b2b->ref(b2a->ref(x, n, H, W, false), n, H, W, true),
                    b3->ref(pool2d(pp, x), n, H, W, true), b4->ref(x, n, H, W, true)});
        PoolParams pi = pp;
        pi.channels = 13;
        return concat(n, H, W, {13, 13}, {pool2d(pi, inc), inc});
    }
};

TEST(ConcatInPlace, InceptionBranchesWriteTheirSlicesAndTheConcatNestsInALaterOne) {
    Inception net(1);
    const sw_graph::Graph g = graph_of(net.m);
    sw_graph::Executor ex(g, options());
    const sw_graph::ConcatInPlaceStats &st = ex.concat_placement().stats;
    EXPECT_EQ(st.concats, 2);
    EXPECT_EQ(st.in_place, 2);
    EXPECT_EQ(st.copying, 0);
    EXPECT_EQ(st.copied_inputs, 0);
    EXPECT_EQ(st.concat_calls_before, 2);
    EXPECT_EQ(st.concat_calls_after, 0);
    EXPECT_EQ(st.copied_bytes_before, 4 * (13 + 26) * Inception::H * Inception::W);
    EXPECT_EQ(st.copied_bytes_after, 0);
    EXPECT_EQ(concat_layers(ex.lowered()), 0); // no concat layer is built
    EXPECT_EQ(steps_with_op(ex.lowered(), sw_graph::kConcatInPlaceOp), 2);
    // inc is the second half of out's buffer; its branches are slices of that half.
    const sw_graph::ConcatPlacement &p = ex.concat_placement();
    const int plane = Inception::H * Inception::W;
    EXPECT_EQ(p.roots.at("out"), 26 * plane);
    EXPECT_EQ(p.slice_of("inc").root, "out");
    EXPECT_EQ(p.slice_of("inc").offset, 13 * plane);
    EXPECT_EQ(p.slice_of("r3").offset, (13 + 9) * plane);
    EXPECT_EQ(p.slice_of("pinc").offset, 0);

    const std::vector<float> x = random_values(size_t(3) * plane, 3);
    const sw_graph::ExecResult r = ex.run({{"x", x}});
    expect_close(r.outputs.at("out").f32, net.reference(x), "out");
    int rows = 0;
    for (const sw_graph::StepResult &s : r.steps) {
        if (!s.in_place)
            continue;
        rows++;
        EXPECT_EQ(s.record.kind, "Concat (in place)");
        EXPECT_EQ(s.record.modelled_seconds, 0.0);
    }
    EXPECT_EQ(rows, 2);
    // The same layers with copying concats give the same bits.
    sw_graph::Executor copying(g, options(false));
    EXPECT_EQ(steps_with_op(copying.lowered(), sw_graph::kConcatInPlaceOp), 0);
    EXPECT_EQ(copying.run({{"x", x}}).outputs.at("out").f32, r.outputs.at("out").f32);
}

TEST(ConcatInPlace, BatchTwoKeepsTheCopyingConcats) {
    Inception net(2);
    sw_graph::Executor ex(graph_of(net.m), options());
    const sw_graph::ConcatInPlaceStats &st = ex.concat_placement().stats;
    EXPECT_EQ(st.in_place, 0);
    EXPECT_EQ(st.copying, 2);
    EXPECT_EQ(st.concat_calls_after, 2);
    ASSERT_EQ(st.notes.size(), 2u);
    EXPECT_NE(st.notes[0].find("batch > 1"), std::string::npos) << st.notes[0];
    EXPECT_TRUE(ex.concat_placement().slices.empty());
    const std::vector<float> x = random_values(size_t(2) * 3 * Inception::H * Inception::W, 4);
    expect_close(ex.run({{"x", x}}).outputs.at("out").f32, net.reference(x), "out");
}

// ------------------------------------------------- DenseNet-like growing concats

/** x (1, 3, 3, 5) -> f0 = conv3x3 (3 channels); dense layer i = 1..8: cat_i = Concat(f0 ..
 * f_{i-1}) (cat_1 a one-input concat: a view), f_i = Relu(Conv1x1(cat_i)) of 2 channels;
 * out = Concat(f0 .. f8) (9 inputs: concats of 7 and 2, then of their outputs, today) ->
 * Relu. Each f_i is in every later concat, as in DenseNet. */
struct DenseBlock {
    static constexpr int H = 3, W = 5, C0 = 3, G = 2, L = 8;
    ModelBuilder m;
    std::vector<std::unique_ptr<Conv>> convs;

    DenseBlock() {
        m.input("x", {1, 1, H, W});
        convs.push_back(std::make_unique<Conv>(m, "x", "f0", 1, C0, 3));
        std::vector<std::string> feats = {"f0"};
        for (int i = 1; i <= L; i++) {
            const std::string cat = "cat" + std::to_string(i), f = "f" + std::to_string(i);
            concat_node(m, feats, cat);
            convs.push_back(std::make_unique<Conv>(m, cat, f + "_conv", C0 + (i - 1) * G, G, 1));
            m.node("Relu", {f + "_conv"}, {f}, f + "_relu");
            feats.push_back(f);
        }
        concat_node(m, feats, "block");
        m.node("Relu", {"block"}, {"out"}, "relu_out");
        m.output("out");
    }

    std::vector<float> reference(const std::vector<float> &x) const {
        std::vector<std::vector<float>> feats = {convs[0]->ref(x, 1, H, W, false)};
        std::vector<int> channels = {C0};
        for (int i = 1; i <= L; i++) {
            const auto cat = reference::concat(1, H, W, channels, feats);
            feats.push_back(convs[size_t(i)]->ref(cat, 1, H, W, true));
            channels.push_back(G);
        }
        return reference::relu(reference::concat(1, H, W, channels, feats));
    }
};

TEST(ConcatInPlace, DenseNetGrowingConcatsAreRangesOfTheBlockBuffer) {
    DenseBlock net;
    const sw_graph::Graph g = graph_of(net.m);
    sw_graph::Executor ex(g, options());
    const sw_graph::ConcatInPlaceStats &st = ex.concat_placement().stats;
    // cat2..cat8 and block (cat1 is a one-input view, no concat).
    EXPECT_EQ(st.concats, 8);
    EXPECT_EQ(st.in_place, 8);
    EXPECT_EQ(st.views, 7); // cat2..cat8 write nothing: prefixes of block's buffer
    EXPECT_EQ(st.concat_calls_before, 6 + 2 + 3); // cat8: 7 then 2 inputs; block: 7, 2, then 2
    EXPECT_EQ(st.concat_calls_after, 0);
    EXPECT_EQ(concat_layers(ex.lowered()), 0);
    const sw_graph::ConcatPlacement &p = ex.concat_placement();
    ASSERT_EQ(p.roots.size(), 1u);
    const int plane = DenseBlock::H * DenseBlock::W;
    EXPECT_EQ(p.roots.at("block"), (DenseBlock::C0 + DenseBlock::L * DenseBlock::G) * plane);
    for (int i = 2; i <= DenseBlock::L; i++) {
        const sw_graph::TensorSlice s = p.slice_of("cat" + std::to_string(i));
        EXPECT_EQ(s.root, "block");
        EXPECT_EQ(s.offset, 0);
    }
    EXPECT_EQ(p.slice_of("f5").offset, (DenseBlock::C0 + 4 * DenseBlock::G) * plane);

    const std::vector<float> x = random_values(plane, 5);
    const sw_graph::ExecResult r = ex.run({{"x", x}});
    expect_close(r.outputs.at("out").f32, net.reference(x), "out");

    // Exported: the block's buffer is one arena entry, and the arena is smaller than with
    // the copying concats.
    const std::string dir = ::testing::TempDir() + "/sw_concat_in_place_dense";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const sw_graph::ExportSummary in_place = sw_graph::export_model(ex, "dense.onnx", dir + "/a");
    sw_graph::Executor copying(g, options(false));
    const sw_graph::ExportSummary copies =
        sw_graph::export_model(copying, "dense.onnx", dir + "/b");
    std::printf("[arena] in place %lld bytes, copying %lld bytes\n",
                (long long)in_place.arena_bytes, (long long)copies.arena_bytes);
    EXPECT_LT(in_place.arena_bytes, copies.arena_bytes);
    EXPECT_EQ(copying.run({{"x", x}}).outputs.at("out").f32, r.outputs.at("out").f32);
    std::filesystem::remove_all(dir);
}

// ------------------------------------------------- inputs that are copied, shared inputs

/** x (1, 3, 3, 3); a = Conv1x1(x) (5 channels), read by the concat, a Relu and an Add;
 * r = Relu(a); cat = Concat(x, a, r, a) (the graph input and the repeated a are copied into
 * their slices, a and r are produced in place); outputs cat and s = Add(a, r). */
struct SharedInputs {
    static constexpr int C = 3, H = 3, W = 3, A = 5;
    ModelBuilder m;
    std::unique_ptr<Conv> conv;

    SharedInputs() {
        m.input("x", {1, C, H, W});
        conv = std::make_unique<Conv>(m, "x", "a", C, A, 1);
        m.node("Relu", {"a"}, {"r"}, "relu");
        concat_node(m, {"x", "a", "r", "a"}, "cat");
        m.node("Add", {"a", "r"}, {"s"}, "add");
        m.output("cat");
        m.output("s");
    }
};

TEST(ConcatInPlace, GraphInputAndRepeatedInputAreCopiedSharedInputsStayCorrect) {
    SharedInputs net;
    sw_graph::Executor ex(graph_of(net.m), options());
    const sw_graph::ConcatInPlaceStats &st = ex.concat_placement().stats;
    EXPECT_EQ(st.in_place, 1);
    EXPECT_EQ(st.copied_inputs, 2);
    EXPECT_EQ(st.concat_calls_after, 0);
    ASSERT_EQ(st.notes.size(), 1u);
    EXPECT_NE(st.notes[0].find("x (a graph input)"), std::string::npos) << st.notes[0];
    EXPECT_NE(st.notes[0].find("a (placed in another slice)"), std::string::npos) << st.notes[0];
    EXPECT_EQ(steps_with_op(ex.lowered(), sw_graph::kConcatCopyInputOp), 2);
    const int plane = SharedInputs::H * SharedInputs::W;
    EXPECT_EQ(ex.concat_placement().slice_of("a").offset, SharedInputs::C * plane);
    EXPECT_EQ(st.copied_bytes_after, 4 * (SharedInputs::C + SharedInputs::A) * plane);

    const std::vector<float> x = random_values(size_t(SharedInputs::C) * plane, 6);
    const sw_graph::ExecResult r = ex.run({{"x", x}});
    const auto a = net.conv->ref(x, 1, SharedInputs::H, SharedInputs::W, false);
    const auto rl = reference::relu(a);
    const reference::Shape4 s4{1, SharedInputs::A, SharedInputs::H, SharedInputs::W};
    expect_close(
        r.outputs.at("cat").f32,
        reference::concat(1, SharedInputs::H, SharedInputs::W,
                          {SharedInputs::C, SharedInputs::A, SharedInputs::A, SharedInputs::A},
                          {x, a, rl, a}),
        "cat");
    expect_close(r.outputs.at("s").f32, reference::eltwise(s4, s4, a, s4, rl, false, false), "s");
}

// ------------------------------------------------- the exported program

int shell(const std::string &cmd, const std::string &log) {
    const int rc = std::system((cmd + " > " + log + " 2>&1").c_str());
    if (rc != 0) {
        std::ifstream f(log);
        std::printf("%s\n",
                    std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>())
                        .c_str());
    }
    return rc;
}

TEST(ConcatInPlace, ExportedProgramWritesTheSlicesAndReproducesTheExecutor) {
    Inception net(1);
    sw_graph::Executor ex(graph_of(net.m), options());
    const std::string dir = ::testing::TempDir() + "/sw_concat_in_place_export";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    sw_graph::export_model(ex, "inception.onnx", dir + "/out");
    std::ifstream c(dir + "/out/sw_model.c");
    const std::string program((std::istreambuf_iterator<char>(c)),
                              std::istreambuf_iterator<char>());
    EXPECT_NE(program.find("concat in place, no copy"), std::string::npos);
    const std::vector<float> x = random_values(size_t(3) * Inception::H * Inception::W, 8);
    sw_io::save_npy(dir + "/x.npy", {1, 3, Inception::H, Inception::W}, x);
    ASSERT_EQ(shell("make -C " + dir + "/out emu", dir + "/make.log"), 0);
    ASSERT_EQ(shell(dir + "/out/sw_model_emu " + dir + "/out/weights.bin " + dir + "/x.npy " + dir +
                        "/y.npy",
                    dir + "/run.log"),
              0);
    const std::vector<float> want = ex.run({{"x", x}}).outputs.at("out").f32;
    EXPECT_EQ(sw_io::load_npy(dir + "/y.npy").data, want);
    std::filesystem::remove_all(dir);
}

} // namespace
