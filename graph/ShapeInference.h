/** \file
 * Static shape inference and folding of shape arithmetic.
 *
 * infer_shapes gives every tensor of a sorted Graph a static shape and element type, node by
 * node, with one rule per operator (a table keyed by op type, each rule listing the
 * attributes it understands): Conv, BatchNormalization, Relu, Clip, LeakyRelu, Sigmoid,
 * HardSigmoid, HardSwish,
 * Add / Mul (numpy broadcasting), Concat, MaxPool / AveragePool (ceil_mode, pads, auto_pad),
 * GlobalAveragePool, GlobalMaxPool, ReduceMean, Gemm, MatMul, Flatten, Reshape (0 and -1),
 * Transpose, Split, Slice (steps, negative indices), Pad, Softmax, LRN, Sum (of two inputs),
 * Dropout, Identity, and the shape arithmetic Shape, Gather, Unsqueeze, Squeeze, Constant, Cast,
 * Sub, Div. Forms that changed between opsets (axes or split as an attribute or as an input, Clip's
 * bounds) are accepted in either form.
 *
 * Folding: a node whose inputs are all constants (and Shape, which needs only its input's
 * shape) is evaluated when its output is small (shape tensors, not weights), its outputs
 * become constants and the node is removed. A Reshape whose shape input folds is then static,
 * so PyTorch's `x.view(x.size(0), -1)` becomes a Reshape with a constant shape. Sub and Div
 * exist only for this: on non-constant tensors they are unsupported.
 *
 * Normalisation: Conv and pooling nodes get explicit `pads` (auto_pad resolved, then
 * removed) and `kernel_shape`, so later stages read one form.
 *
 * Errors (Error, naming the file and the node): an unsupported operator, domain, attribute,
 * attribute value or extra output; inconsistent shapes; a graph input with a dynamic or
 * unknown dim and no entry in InferenceOptions::input_shapes; a Reshape whose shape does not
 * fold to a constant. Not checked: the values of weights (NaN etc.).
 */
#ifndef SW_GRAPH_SHAPE_INFERENCE_H
#define SW_GRAPH_SHAPE_INFERENCE_H

#include "graph/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace sw_graph {

struct InferenceOptions {
    /** Shapes for graph inputs (command line: --input-shape name=1x3x224x224). They replace
     * the declared shape, whose static dims must agree. */
    std::map<std::string, std::vector<int64_t>> input_shapes;
};

/** "1x3x224x224" -> {1, 3, 224, 224}; throws Error naming `what` on anything else. */
std::vector<int64_t> parse_dims(const std::string &text, const std::string &what);

/** Adds "name=1x3x224x224" to options.input_shapes; throws Error on a malformed entry. */
void add_input_shape(const std::string &arg, InferenceOptions &options);

/** Infers every shape of g (sorted: OnnxReader's output), folds shape arithmetic and
 * removes the folded nodes. Throws Error. */
void infer_shapes(Graph &g, const InferenceOptions &options = {});

/** What a Slice node reads: per axis of its input, the first index, the step and the
 * count (the output's dim). Starts and ends as ONNX clamps them. */
struct SliceBox {
    std::vector<int64_t> begin, step, shape;
};

/** The box of a Slice node (opset 1-9 attributes, or constant inputs with steps) whose
 * input has a static shape; throws NodeError on inconsistent or non-constant parameters. */
SliceBox slice_box(const Graph &g, const Node &node);

/** What a Resize (opsets 10-18: X, scales; X, roi, scales, sizes) or Upsample (opset 7: the
 * scales attribute; 9: X, scales) node resizes to: per axis of X, the output dim and ONNX's
 * scale (the given scale; 0 where sizes gave the output dim). Sizes and scales must be
 * constants, exactly one of them given (an empty tensor counts as absent); with opset 18's
 * `axes`, only those axes. out = floor(in * scale). */
struct ResizeTarget {
    std::vector<int64_t> shape;
    std::vector<double> scales;
};

/** The target of a Resize or Upsample node whose input has a static shape; throws NodeError
 * naming the input or attribute at fault. */
ResizeTarget resize_target(const Graph &g, const Node &node);

/** A ConvTranspose node's geometry, per spatial axis of X (N, C, spatial...): kernel, strides,
 * dilations, output_padding, the pads at the start and end (from output_shape or auto_pad when
 * given, as ONNX defines them), the output dims; and the weights' (C, M / group, k...) M and the
 * group. */
struct ConvTransposeGeometry {
    std::vector<int64_t> kernel, strides, dilations, output_padding, pads_begin, pads_end, out;
    int64_t out_channels = 0, group = 1;
};

/** The geometry of a ConvTranspose node whose X and W have static shapes; throws NodeError
 * naming the attribute at fault. */
ConvTransposeGeometry conv_transpose_geometry(const Graph &g, const Node &node);
/** A Pad node's pads over every axis of its input (2 x rank values: the begins, then the ends),
 * from the attribute pads (opset < 11) or the constant inputs pads and axes (opset 11 on, axes
 * from 18); false when they are not constants or do not fit the input. */
bool pad_amounts(const Graph &g, const Node &node, std::vector<int64_t> &pads);

/** The operator types infer_shapes knows, sorted. */
std::vector<std::string> supported_operators();

} // namespace sw_graph

#endif
