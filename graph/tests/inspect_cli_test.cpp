/** \file
 * sw_graph_inspect, run as a user would: a good model prints one line per node and the
 * totals; a missing, non-ONNX or truncated file, or a dynamic input without --input-shape,
 * prints "error: ..." and exits with status 1.
 */
#include "graph/tests/cli_run.h"
#include "graph/tests/model_builder.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#ifndef SW_GRAPH_INSPECT
#error "SW_GRAPH_INSPECT (path of sw_graph_inspect) must be defined"
#endif

using sw_graph_test::ModelBuilder;

namespace {

sw_graph_test::CliRun run(const std::string &args) {
    return sw_graph_test::run_shell(std::string(SW_GRAPH_INSPECT) + " " + args);
}

std::string write_file(const std::string &name, const std::string &bytes) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream f(path, std::ios::binary);
    f << bytes;
    return path;
}

ModelBuilder net(int64_t batch) {
    ModelBuilder m;
    m.input("data", {batch, 3, 8, 8});
    m.init_random("w", {4, 3, 3, 3});
    for (const char *p : {"g", "b", "mu"})
        m.init_random(p, {4});
    m.init_random("v", {4}, 0.5f, 1.0f);
    auto &c = m.node("Conv", {"data", "w"}, {"c"}, "conv1");
    ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
    m.node("BatchNormalization", {"c", "g", "b", "mu", "v"}, {"bn"}, "bn1");
    m.node("Relu", {"bn"}, {"r"}, "relu1");
    m.node("GlobalAveragePool", {"r"}, {"p"}, "gap");
    m.node("Flatten", {"p"}, {"f"}, "flatten");
    m.init_random("fw", {10, 4});
    auto &fc = m.node("Gemm", {"f", "fw"}, {"y"}, "fc");
    ModelBuilder::attr_i(fc, "transB", 1);
    m.output("y");
    return m;
}

} // namespace

TEST(GraphInspect, PrintsNodesShapesAndTotals) {
    const std::string path = write_file("inspect_good.onnx", net(1).bytes());
    const sw_graph_test::CliRun r = run(path);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(
        r.out.find(
            "node    conv1 Conv (data, w const 4x3x3x3, bn_bias const 4) -> bn 1x4x8x8  MACs 6912"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("node    fc Gemm (f, fw const 10x4) -> y 1x10  MACs 40"),
              std::string::npos)
        << r.out;
    // 108 + 4 folded conv parameters, 40 FC weights; 6912 + 40 MACs.
    EXPECT_NE(r.out.find("total   5 nodes, 152 parameters, 6952 MACs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("pass    fold_batch_norm: 1 nodes"), std::string::npos) << r.out;
    const sw_graph_test::CliRun raw = run(path + " --no-passes");
    EXPECT_NE(raw.out.find("node    bn1 BatchNormalization"), std::string::npos) << raw.out;
}

TEST(GraphInspect, DynamicInputNeedsInputShape) {
    const std::string path = write_file("inspect_dynamic.onnx", net(-1).bytes());
    sw_graph_test::CliRun r = run(path);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.out.find("error: " + path +
                         ": input 'data' has a dynamic dimension (dim 0 of "
                         "?x3x8x8); give --input-shape data=1x3x8x8"),
              std::string::npos)
        << r.out;
    r = run(path + " --input-shape data=2x3x8x8");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("-> y 2x10"), std::string::npos) << r.out;
    r = run(path + " --input-shape data=2x3");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.out.find("error: " + path + ": --input-shape data=2x3 does not match"),
              std::string::npos)
        << r.out;
}

TEST(GraphInspect, BadFilesFailCleanly) {
    sw_graph_test::CliRun r = run("/nonexistent/model.onnx");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "error: /nonexistent/model.onnx: cannot open: No such file or directory\n");

    const std::string text =
        write_file("inspect_text.onnx", "graph { node { op_type: 'Relu' } }\n");
    r = run(text);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out.rfind("error: " + text + ": not an ONNX model", 0), 0u) << r.out;

    const std::string bytes = net(1).bytes();
    const std::string cut = write_file("inspect_truncated.onnx", bytes.substr(0, bytes.size() / 2));
    r = run(cut);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out.rfind("error: " + cut + ": not an ONNX model", 0), 0u) << r.out;

    r = run(::testing::TempDir());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;

    r = run("");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out.rfind("error: model is required", 0), 0u) << r.out;
}
