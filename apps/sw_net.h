/** \file
 * sw_net's options and its two runs: a built-in network (--net, sw_net.cpp) and an ONNX
 * model compiled ahead of time layer by layer (--model, sw_net_model.cpp).
 */
#ifndef SW_APPS_SW_NET_H
#define SW_APPS_SW_NET_H

#include <string>
#include <vector>

namespace sw_net_app {

struct Options {
    std::string net = "vgg19", model, image, input, weights, labels, schedule, dump, report, trace;
    std::string default_labels;  ///< ImageNet's class names (used for 1000 classes)
    std::vector<std::string> input_shapes;  ///< --input-shape name=NxCxHxW
    std::string cache_dir;                  ///< --cache-dir; "" = the default
    std::string export_dir;                 ///< --export: a folder for sw5cc (with --model)
    bool no_cache = false, compare = true, allow_nonfinite = false, image_given = false, top_given = false;
    int batch = 0;  ///< 0: not given
    int top = 5, jobs = 0;
};

/** Prints the top-k values of each row of a (rows, classes) array with their labels. */
void print_top(const std::vector<float> &values, int rows, int classes, int k,
               const std::vector<std::string> &labels, const char *what);

/** Checks every output path of the options (--report, --trace, --dump-output) before the run. */
void check_outputs(const Options &o);

int run_net(const Options &o);
/** Throws std::runtime_error if this build has no ONNX import. */
int run_model(const Options &o);

}  // namespace sw_net_app

#endif
