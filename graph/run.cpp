/** \file
 * sw_graph_run: imports an ONNX model, lowers it to our layers, builds each distinct layer
 * once (generator, cc, dlopen) and runs the graph on the emulated SW26010 core group with a
 * seeded random input in [-1, 1). Prints one line per step (node, generator, modelled ms),
 * the total, and each graph output's shape and first values. Errors: "error: ..." on
 * stderr, exit status 1.
 */
#include "graph/Executor.h"
#include "graph/Import.h"
#include "graph/ShapeInference.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <random>

int main(int argc, char **argv) {
    CLI::App app{"Import an ONNX model and run it on the emulated SW26010 core group"};
    std::string model;
    std::vector<std::string> shapes;
    unsigned seed = 1;
    int show = 8;
    app.add_option("model", model, "the .onnx file")->required();
    app.add_option("--input-shape", shapes,
                   "static shape of a graph input with dynamic dims, name=NxCxHxW (repeatable)")
        ->take_all();
    app.add_option("--seed", seed, "seed of the random input (default 1)");
    app.add_option("--show", show, "output values to print (default 8)");
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
        for (const std::string &s : shapes) sw_graph::add_input_shape(s, options.inference);
        sw_graph::Graph g = sw_graph::import_onnx(model, options);
        sw_graph::Executor ex(g);
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> dist(-1.f, 1.f);
        std::map<std::string, std::vector<float>> inputs;
        for (const std::string &name : g.inputs) {
            const sw_graph::Tensor &t = g.tensor(name);
            if (t.dtype != sw_graph::DType::Float32) {
                throw g.error("graph input '" + name + "' is " + sw_graph::dtype_name(t.dtype) +
                              " (float32 only)");
            }
            std::vector<float> v((size_t)t.elements());
            for (float &x : v) x = dist(rng);
            std::printf("input   %s %s\n", name.c_str(), sw_graph::shape_string(t.shape).c_str());
            inputs[name] = std::move(v);
        }
        sw_graph::ExecResult r = ex.run(inputs);
        for (const sw_graph::StepResult &s : r.steps) {
            if (s.layer < 0) {
                std::printf("layer   %-40s %-16s view\n", s.node.c_str(), "-");
            } else {
                std::printf("layer   %-40s %-16s %10.4f ms\n", s.node.c_str(), s.generator.c_str(),
                            s.modelled_seconds * 1e3);
            }
        }
        std::printf("total   %d steps, %d distinct layers, %.4f ms modelled\n", (int)r.steps.size(),
                    r.distinct_layers, r.modelled_seconds * 1e3);
        for (const auto &o : r.outputs) {
            std::printf("output  %s %s:", o.first.c_str(), sw_graph::shape_string(o.second.shape).c_str());
            for (int i = 0; i < show && i < (int)o.second.f32.size(); i++) std::printf(" %.6g", o.second.f32[i]);
            std::printf("\n");
        }
    } catch (const sw_graph::Error &e) {
        std::cerr << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "error: " << model << ": " << e.what() << "\n";
        return 1;
    }
    return 0;
}
