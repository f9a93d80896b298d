/** \file
 * sw_net's options and its one runtime (sw_net_model.cpp): a graph, a built-in network
 * (--net, graph/Networks.h) or an ONNX model (--model), compiled ahead of time layer by layer
 * and run on the emulated core group.
 */
#ifndef SW_APPS_SW_NET_H
#define SW_APPS_SW_NET_H

#include "dist/JobModel.h"
#include "dist/Ranks.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sw_graph {
class Graph;
}

namespace sw_net_app {

struct Options {
    std::string net = "vgg19", model, image, input, weights, labels, schedule, report, trace;
    /** --dump-output (repeatable): PATH writes the first output; NAME=PATH (NAME one of the
     * graph's outputs) writes that output. */
    std::vector<std::string> dumps;
    std::string default_labels;            ///< ImageNet's class names (used for 1000 classes)
    std::vector<std::string> input_shapes; ///< --input-shape name=NxCxHxW
    /** --input name=file.npy (repeatable; with --model): every input of a model of several
     * inputs or of int64 ones. A single --input without a name is `input`. */
    std::vector<std::string> named_inputs;
    std::string cache_dir;           ///< --cache-dir; "" = the default
    std::string machine = "sw26010"; ///< --machine: sw26010 or sw26010-pro
    std::string export_dir;          ///< --export: a folder for sw5cc (with --model)
    bool concat_copies = false;      ///< --concat-copies: no in-place concats (with --model)
    /** --fuse-prologue (with --model): auto, always or never (graph/Lowering.h). */
    std::string fuse_prologue = "auto";
    bool fc_split = false; ///< --fc-split: dense layers split by rows over the ranks
    /** --net's reduced variants (tests): channels divided, input size (0: the network's),
     * classes. */
    int channel_div = 1, input_size = 0, classes = 1000;
    bool no_cache = false, compare = true, allow_nonfinite = false, image_given = false,
         top_given = false;
    int batch = 0; ///< 0: not given
    int top = 5, jobs = 0;
};

/** The top-k classes of each image of a run, kept for printing after it: k (value, class)
 * pairs per image, not the images' whole outputs (a batch is streamed, its memory does not
 * grow with the outputs of every image). NaN ranks first: it must not hide behind finite
 * values. */
class TopK {
public:
    TopK(int64_t classes, int k);
    /** Adds the outputs of \p rows more images, rows x classes values in C order. */
    void add(const float *values, int64_t rows);
    /** For each image: "image N: top-K (WHAT)" and K lines of value, class and label. */
    void print(const std::vector<std::string> &labels, const char *what) const;
    /** The kept (value, class) pairs, k per image, as two vectors (to send them to rank 0). */
    std::vector<double> values() const;
    std::vector<int64_t> classes() const;
    /** Appends the images whose pairs another TopK gave (values(), classes()). */
    void append(const std::vector<double> &values, const std::vector<int64_t> &classes);

private:
    int64_t classes_;
    int k_;
    std::vector<std::pair<float, int64_t>> best_; ///< k_ per image
};

/** With several ranks: the data-parallel lines under a run's header (and a note when ranks
 * idle because there are fewer passes). */
void print_data_parallel(const sw_dist::Job &job, int passes);

/** A data-parallel run's end (under mpirun; nothing without MPI): every rank's top-k pairs
 * (appended to rank 0's \p top, in rank order: the shares are contiguous) and output rows
 * (written by rank 0 to \p dump with \p dump_shape, if a path is given and there are several
 * ranks: one rank streams its own), and the figures
 * of every rank (returned on rank 0: its images, modelled seconds and the bytes it sent). */
std::vector<sw_dist::RankFigures> gather_data_parallel(const sw_dist::Job &job, TopK *top,
                                                       const std::vector<float> &rows,
                                                       const std::vector<int64_t> &dump_shape,
                                                       const std::string &dump, int64_t images,
                                                       double modelled_seconds);

/** Removes an output written in part when the run fails (a regular file only, not a device). */
void remove_partial_output(const std::string &path);

/** Checks every output path of the options (--report, --trace, --dump-output) before the run. */
void check_outputs(const Options &o);

/** What run_graph says about the graph it runs. */
struct GraphRun {
    std::string title;          ///< the first line's name: the network or the model file
    bool probabilities = false; ///< the output is probabilities (else "value")
    std::string note;           ///< a line under the input's (e.g. where the weights come from)
};

/** The one runtime of --net and --model: lowers \p g, builds each distinct layer (the
 * layer cache, the schedule of the options), optionally exports it, runs the passes of
 * --batch and prints the top classes and the per-layer table. With several ranks, each runs
 * its share of the passes (rank 0 builds the layers first, the others load them from the
 * cache) and rank 0 prints and writes everything; with --fc-split every rank runs every pass
 * and the dense layers are split over the ranks (fc_split.h). */
int run_graph(const Options &o, const sw_dist::Job &job,
              std::shared_ptr<const sw_graph::Graph> graph, const GraphRun &what);

/** The built-in network (graph/Networks.h) through run_graph. */
int run_net(const Options &o, const sw_dist::Job &job);
/** An ONNX model through run_graph. */
int run_model(const Options &o, const sw_dist::Job &job);

/** sw_net's main on one rank of \p job: options, the run, its errors. */
int main_of_rank(int argc, char **argv, const sw_dist::Job &job);

} // namespace sw_net_app

#endif
