/** \file
 * OnnxReader: initializers (raw and typed data), attributes, inputs; and every kind of bad
 * file: missing, not ONNX, truncated at every byte, corrupted dims, wrong IR or opset, a
 * missing initializer, a cycle.
 */
#include "graph/tests/model_builder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace sw_graph;
using sw_graph_test::ModelBuilder;
using Dims = std::vector<int64_t>;

namespace {

std::string read_error(const std::string &bytes) {
    try {
        read_onnx_bytes(bytes, "m.onnx");
    } catch (const Error &e) {
        return e.what();
    }
    return "(no error)";
}

ModelBuilder small_model() {
    ModelBuilder m;
    m.input("x", {1, 2, 4, 4});
    m.init_random("w", {3, 2, 3, 3});
    m.init("b", {3}, {0.5f, -1.0f, 2.0f}, /*typed=*/true);
    auto &c = m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
    ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
    ModelBuilder::attr_s(c, "auto_pad", "NOTSET");
    ModelBuilder::attr_f(c, "unused_float", 0.25f);
    m.output("y");
    return m;
}

} // namespace

TEST(GraphReader, InitializersAttributesInputs) {
    ModelBuilder m = small_model();
    Graph g = m.read();
    EXPECT_EQ(g.source, "test.onnx");
    EXPECT_EQ(g.opset, 13);
    EXPECT_EQ(g.inputs, (std::vector<std::string>{"x"}));
    EXPECT_EQ(g.outputs, (std::vector<std::string>{"y"}));
    const Tensor &w = g.tensor("w");
    EXPECT_TRUE(w.is_constant);
    EXPECT_EQ(w.shape, (Dims{3, 2, 3, 3}));
    EXPECT_EQ(w.f32.size(), 54u);
    EXPECT_EQ(g.tensor("b").f32, (std::vector<float>{0.5f, -1.0f, 2.0f}));
    ASSERT_EQ(g.nodes.size(), 1u);
    const Node &n = g.nodes[0];
    EXPECT_EQ(n.attr_ints("pads", {}), (Dims{1, 1, 1, 1}));
    EXPECT_EQ(n.attr_string("auto_pad", ""), "NOTSET");
    EXPECT_FLOAT_EQ(n.attr_float("unused_float", 0), 0.25f);
    EXPECT_THROW(n.attr_int("pads", 0), NodeError); // wrong type
}

TEST(GraphReader, Int64AndInt32Initializers) {
    ModelBuilder m;
    m.input("x", {2, 6});
    m.init_ints("s", {3, -1});
    auto *t = m.g->add_initializer();
    t->set_name("i32");
    t->set_data_type(onnx::TensorProto_DataType_INT32);
    t->add_dims(2);
    int32_t raw[2] = {7, -8};
    t->set_raw_data(std::string((const char *)raw, 8));
    m.node("Reshape", {"x", "s"}, {"y"});
    m.node("Relu", {"x"}, {"unused"}); // reads nothing of i32; i32 stays a constant
    m.output("y");
    Graph g = m.read();
    EXPECT_EQ(g.tensor("s").i64, (Dims{3, -1}));
    EXPECT_EQ(g.tensor("i32").i64, (Dims{7, -8}));
    EXPECT_EQ(g.tensor("i32").dtype, DType::Int64);
}

TEST(GraphReader, MissingFile) {
    try {
        read_onnx_file("/nonexistent/model.onnx");
        FAIL();
    } catch (const Error &e) {
        EXPECT_STREQ(e.what(),
                     "error: /nonexistent/model.onnx: cannot open: No such file or directory");
    }
}

TEST(GraphReader, NotOnnx) {
    EXPECT_EQ(read_error("this is a text file, not a model\n"),
              "error: m.onnx: not an ONNX model (the protobuf does not parse: a truncated or "
              "non-ONNX file)");
    EXPECT_EQ(read_error(""), "error: m.onnx: not an ONNX model (no graph or no IR version)");
}

TEST(GraphReader, TruncatedAtEveryByteFailsCleanly) {
    const std::string bytes = small_model().bytes();
    ASSERT_GT(bytes.size(), 200u);
    for (size_t n = 0; n < bytes.size(); n++) {
        const std::string e = read_error(bytes.substr(0, n));
        EXPECT_EQ(e.rfind("error: m.onnx: ", 0), 0u) << "cut at " << n << ": " << e;
    }
    EXPECT_EQ(read_error(bytes), "(no error)");
}

TEST(GraphReader, CorruptedDimsDoNotAllocate) {
    // Dims claiming 2^60 elements with 8 bytes of data: rejected before any allocation.
    ModelBuilder m = small_model();
    auto *w = m.g->mutable_initializer(0);
    w->clear_dims();
    for (int i = 0; i < 3; i++)
        w->add_dims(1 << 20);
    w->set_raw_data(std::string(8, '\0'));
    EXPECT_EQ(read_error(m.bytes()), "error: m.onnx: initializer 'w': dims 1048576x1048576x1048576 "
                                     "need 1152921504606846976 elements but raw_data holds 2");
    // Dims whose product overflows int64.
    w->clear_dims();
    for (int i = 0; i < 3; i++)
        w->add_dims(1LL << 40);
    EXPECT_NE(read_error(m.bytes()).find("more elements than int64 holds"), std::string::npos);
    w->clear_dims();
    w->add_dims(-5);
    EXPECT_NE(read_error(m.bytes()).find("initializer 'w': has a negative dim"), std::string::npos);
    // Typed data of the wrong length.
    auto *b = m.g->mutable_initializer(1);
    b->add_dims(2);
    w->clear_dims();
    w->add_dims(2);
    EXPECT_NE(read_error(m.bytes()).find(
                  "initializer 'b': dims 3x2 need 6 elements but float_data holds 3"),
              std::string::npos)
        << read_error(m.bytes());
}

TEST(GraphReader, ExternalDataAndUnsupportedTypes) {
    ModelBuilder m = small_model();
    m.g->mutable_initializer(0)->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    EXPECT_NE(read_error(m.bytes()).find("initializer 'w': external data is not supported"),
              std::string::npos);
    ModelBuilder m2 = small_model();
    m2.g->mutable_initializer(0)->set_data_type(onnx::TensorProto_DataType_DOUBLE);
    EXPECT_NE(read_error(m2.bytes()).find("element type DOUBLE is not supported"),
              std::string::npos);
}

TEST(GraphReader, IrAndOpsetChecks) {
    ModelBuilder m = small_model();
    m.model.set_ir_version(2);
    EXPECT_EQ(read_error(m.bytes()), "error: m.onnx: IR version 2 is not supported (3 to 10 are)");
    m.model.set_ir_version(7);
    m.model.mutable_opset_import(0)->set_version(99);
    EXPECT_EQ(read_error(m.bytes()), "error: m.onnx: opset 99 is not supported (1 to 18 are)");
    m.model.mutable_opset_import(0)->set_domain("ai.onnx.ml");
    EXPECT_EQ(read_error(m.bytes()),
              "error: m.onnx: the model imports no opset of the default ONNX domain");
}

TEST(GraphReader, MissingInitializerAndCycle) {
    ModelBuilder m;
    m.input("x", {1, 3, 4, 4});
    m.node("Conv", {"x", "weights"}, {"y"}, "conv1");
    m.output("y");
    EXPECT_EQ(read_error(m.bytes()), "error: m.onnx: node 'conv1' (Conv): input 'weights' is not "
                                     "produced by any node, initializer or graph input");
    ModelBuilder c;
    c.input("x", {1, 4});
    c.node("Add", {"x", "b"}, {"a"}, "first");
    c.node("Relu", {"a"}, {"b"}, "second");
    c.output("b");
    EXPECT_EQ(read_error(c.bytes()), "error: m.onnx: node 'first' (Add): is part of a cycle (its "
                                     "inputs depend on its outputs)");
}

TEST(GraphReader, SortsNodesTopologically) {
    ModelBuilder m;
    m.input("x", {1, 4});
    m.node("Sigmoid", {"a"}, {"y"}, "second");
    m.node("Relu", {"x"}, {"a"}, "first");
    m.output("y");
    Graph g = m.read();
    EXPECT_EQ(g.nodes[0].name, "first");
    EXPECT_EQ(g.nodes[1].name, "second");
}

TEST(GraphReader, FileRoundTrip) {
    const std::string path = ::testing::TempDir() + "sw_graph_reader_test.onnx";
    {
        std::ofstream f(path, std::ios::binary);
        f << small_model().bytes();
    }
    Graph g = read_onnx_file(path);
    EXPECT_EQ(g.source, path);
    EXPECT_EQ(g.nodes.size(), 1u);
    std::remove(path.c_str());
}

// Names from the file reach messages and tables escaped: bytes that are not UTF-8, control
// characters (an ANSI escape) and a backslash are written as \xHH and \\; valid UTF-8 stays.
// Every occurrence of a name maps the same way (references still match), and an error names
// the node in its escaped form, with no raw byte.
TEST(GraphReader, NamesAreEscaped) {
    EXPECT_EQ(escape_name("conv1/Relu_0"), "conv1/Relu_0");
    EXPECT_EQ(escape_name("\xc3\x9f\xe5\xb1\xa4"), "\xc3\x9f\xe5\xb1\xa4"); // U+00DF, U+5C64
    EXPECT_EQ(escape_name("a\\b"), "a\\\\b");
    EXPECT_EQ(escape_name("\xff\x1b[31m"), "\\xff\\x1b[31m");
    EXPECT_EQ(escape_name("\xc0\xaf"), "\\xc0\\xaf");          // an overlong '/'
    EXPECT_EQ(escape_name("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // a surrogate
    EXPECT_EQ(escape_name("\xe5\xb1"), "\\xe5\\xb1");          // truncated
    EXPECT_NE(escape_name("\xff"), escape_name("\\xff"));      // distinct names stay distinct

    ModelBuilder m;
    m.input("x\xfe", {1, 2, 4, 4});
    m.node("Relu", {"x\xfe"}, {"r\x07"}, "relu\xff\x1b[2J");
    m.node("Frobnicate", {"r\x07"}, {"y"}, "bad\x9b");
    m.output("y");
    const std::string bytes = m.bytes();
    EXPECT_EQ(read_error(bytes), "(no error)"); // reading does not check operators
    Graph g = read_onnx_bytes(bytes, "m.onnx");
    EXPECT_EQ(g.inputs, (std::vector<std::string>{"x\\xfe"}));
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].name, "relu\\xff\\x1b[2J");
    EXPECT_EQ(g.nodes[0].inputs[0], "x\\xfe");
    EXPECT_EQ(g.nodes[0].outputs[0], g.nodes[1].inputs[0]);
    std::string msg;
    try {
        infer_shapes(g);
    } catch (const Error &err) {
        msg = err.what();
    }
    EXPECT_NE(msg.find("node 'bad\\x9b' (Frobnicate)"), std::string::npos) << msg;
    for (char ch : msg) {
        const unsigned char u = static_cast<unsigned char>(ch);
        EXPECT_TRUE(u >= 0x20 && u < 0x7f) << "raw byte " << int(u) << " in: " << msg;
    }
}
