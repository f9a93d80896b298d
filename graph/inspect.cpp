/** \file
 * sw_graph_inspect: imports an ONNX model (read, shape inference with folding of shape
 * arithmetic, graph passes) and prints the graph: one line per node with its operator,
 * inputs and output shapes, then the totals (parameters, MACs). Errors: "error: ..." on
 * stderr, exit status 1.
 */
#include "graph/Import.h"
#include "graph/ShapeInference.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

int main(int argc, char **argv) {
    CLI::App app{"Import an ONNX model and print its graph with static shapes"};
    std::string model;
    std::vector<std::string> shapes;
    bool no_passes = false;
    app.add_option("model", model, "the .onnx file")->required();
    app.add_option("--input-shape", shapes,
                   "static shape of a graph input with dynamic dims, name=1x3x224x224 (repeatable)")
        ->take_all();
    app.add_flag("--no-passes", no_passes, "print the graph before the passes (BN folding, ...)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        std::cerr << "error: " << e.what() << "\n" << app.help();
        return 1;
    }
    try {
        sw_graph::ImportOptions options;
        for (const std::string &s : shapes)
            sw_graph::add_input_shape(s, options.inference);
        options.run_passes = !no_passes;
        std::vector<std::string> log;
        sw_graph::Graph g = sw_graph::import_onnx(model, options, &log);
        std::cout << g.dump();
        for (const std::string &line : log)
            std::cout << "pass    " << line << "\n";
    } catch (const sw_graph::Error &e) {
        std::cerr << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "error: " << model << ": " << e.what() << "\n";
        return 1;
    }
    return 0;
}
