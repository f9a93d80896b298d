/** \file
 * The built-in networks (sw_net --net) as graphs, built in C++: the same Graph an ONNX
 * import gives (shapes inferred), so that they run through the same lowering, executor,
 * layer cache, reports, MPI and export as an ONNX model.
 *
 *   alexnet  Caffe's bvlc_alexnet: 227x227, conv 96-256-384-384-256 (groups of 2 in conv2, 4
 *            and 5; ReLU after each), LRN (5, 1e-4, 0.75, 1) after conv1 and conv2, 3x3/2 max
 *            pools after norm1, norm2 and conv5, FC 4096-4096-1000 (ReLU after fc6 and fc7),
 *            softmax
 *   vgg16    VGG configuration D, 224x224: 3x3 convolutions (pad 1, ReLU) in blocks of 2, 2, 3,
 *   vgg19    3, 3 (E: 2, 2, 4, 4, 4) of 64-128-256-512-512 channels, each block ending in a 2x2/2
 *            max pool, then the classifier as AlexNet's
 *
 * Nodes are named after the layers (conv1, norm1, pool1, ..., fc6, fc7, fc8, prob; VGG's
 * conv1_1 ... conv5_4), each Conv and Gemm followed by its Relu (relu1, relu_fc6, ...: the
 * lowering fuses them), the pooled features flattened (flatten) before fc6. A layer's weights
 * are the tensors <layer>.weight (conv OIHW, FC [out, in]: PyTorch's layout) and <layer>.bias.
 * Dropout is the identity at inference and has no node. The output is "prob": (batch,
 * classes) probabilities.
 */
#ifndef SW_GRAPH_NETWORKS_H
#define SW_GRAPH_NETWORKS_H

#include "graph/Graph.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sw_graph {

struct NetworkConfig {
    std::string name = "vgg19"; ///< alexnet, vgg16 or vgg19
    /** Reduced variants for tests: every channel count and the FC width divided by this. */
    int channel_div = 1;
    int input = 0; ///< the input's height and width; 0: 227 (AlexNet), 224 (VGG)
    int batch = 1;
    int classes = 1000;
};

/** A layer's parameters: layer name, "weight" or "bias", and the shape (PyTorch layout);
 * returns the values in C order. */
using ParameterSource = std::function<std::vector<float>(
    const std::string &layer, const std::string &what, const std::vector<int64_t> &shape)>;

/** The built-in networks' names: alexnet, vgg16, vgg19. */
const std::vector<std::string> &network_names();

/** The input size a network takes by default (227 or 224); throws Error for an unknown name. */
int default_input_size(const std::string &name);

/** The network as a sorted graph with inferred shapes, its parameters from \p parameters
 * (called once per weight and bias, in layer order). Without \p parameters (nullptr) the
 * weights and biases are constants with their shapes and no data: enough to list the layers
 * (lower_graph), not to run them (the executor refuses a constant of the wrong size). Throws
 * Error on an unknown network or a configuration whose sizes do not work out (a pool or a
 * channel count below 1). */
Graph network_graph(const NetworkConfig &config, const ParameterSource &parameters);

} // namespace sw_graph

#endif
