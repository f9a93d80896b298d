/** \file
 * Lowering: maps each node of an imported graph (after ShapeInference and the passes) to a
 * layer, a generator of generators/ (layers.generator) with its parameters, or to a view
 * (Flatten, Reshape, Squeeze, Unsqueeze of contiguous NCHW data: the same buffer, no
 * layer). Every tensor is a dense row-major float32 buffer; a step names the tensors it
 * reads and writes and the Halide extents (x fastest: the ONNX dims reversed, regrouped as
 * the generator expects) it sees them with.
 *
 *   ChannelScaleShift (+ Relu) -> Conv: the affine's output (or its fused Relu's) read by
 *           that Conv alone (as its X) and no graph output: fused into the conv as its
 *           prologue (conv2d prologue=scale_shift or scale_shift_relu, the affine's scale and
 *           shift as the inputs pre_scale and pre_shift; the affine's step disappears and the
 *           conv reads the affine's input), kind "ChannelScaleShift+Relu+Conv..." where
 *           PrologueFusion decides (by default where the layers' predicted costs say the fused
 *           conv is faster: LowerOptions::coster); the step records the two layers' unfused
 *           roofline terms (Step::unfused)
 *   Conv -> conv2d (groups, dilations, strides, asymmetric pads; a Relu that is the conv's
 *           only consumer is fused: relu=true, and so is a Clip from 0 to a constant max
 *           (ReLU6): relu=true relu_max=max, "Conv+Clip"; a pointwise conv (1x1 kernel, no
 *           padding) sees its map as one row of H*W pixels (width=H*W height=1, the same NCHW
 *           memory), and with strides it reads a subsampled copy written first by a pool
 *           step with a 1x1 window ("Subsample"); an Add of the conv's output and another
 *           tensor of its shape, the conv's only consumer, is fused as residual=true with the
 *           other tensor as the layer's fourth input, and a Relu that is the Add's only
 *           consumer after it: "Conv+Add+Relu", one layer for a ResNet block's tail; that
 *           step is placed at the Add, after both operands)
 *   Gemm -> dense (transA=0, transB=1, B and C constants; C of shape (N), (1, N) or a
 *           scalar; others are refused naming the node; a Relu that is the Gemm's only
 *           consumer is fused: relu=true, "Gemm+Relu")
 *   MatMul -> dense (any A by a constant matrix B: the rows of A as the batch, B
 *           transposed; an Add of a constant vector of N that is the MatMul's only consumer
 *           is fused as the bias, and a Relu after it: "MatMul+Add+Relu")
 *   Relu / Clip / LeakyRelu / Sigmoid / HardSigmoid / HardSwish (and fuse_hard_swish's
 *   sw_graph.HardSwish) -> activation (a HardSigmoid or HardSwish that is a Conv's only
 *   consumer is fused into the conv: activation=hard_sigmoid|hard_swish, "Conv+HardSwish");
 *   Add / Mul / Sum of two -> eltwise
 *   (numpy broadcasting)
 *   MaxPool / AveragePool -> pool; GlobalAveragePool / GlobalMaxPool / ReduceMean (trailing
 *   axes) -> global_pool; Concat -> concat; ChannelScaleShift -> channel_affine (a Relu
 *   that is its only consumer fused: relu=true, "ChannelScaleShift+Relu");
 *   LRN -> lrn; Softmax (last axis, or opset < 13) -> softmax;
 *   ChannelShuffle (fuse_channel_shuffle) -> channel_shuffle; Slice (step 1 along one axis)
 *   and Split -> channel_slice per output (the dims before the axis as the batch, those
 *   after it as the width), a view when an output is the whole input
 *   Pad (rank <= 4; mode constant with any constant value, reflect or edge; negative pads crop)
 *   -> pad (a zero Pad that alone feeds an AveragePool or Conv is folded into it first:
 *   fold_pad_into_window)
 *
 * Distinct (generator, params) pairs are listed once (LoweredGraph::layers). A node with no
 * layer, or an attribute or shape its layer cannot express, throws Error naming the node,
 * its operator and what is missing.
 */
#ifndef SW_GRAPH_LOWERING_H
#define SW_GRAPH_LOWERING_H

#include "graph/Graph.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sw_graph {

/** A tensor as a layer argument: its name and the Halide extents the layer sees. */
struct LayerArg {
    std::string tensor;
    std::vector<int> extents;
};

/** One distinct generated layer. */
struct LayerSpec {
    std::string generator;
    std::map<std::string, std::string> params;
    /** Why this layer takes its hand schedule even when the executor autoschedules (its hand
     * schedule has techniques the autoscheduler's plans lack); empty: autoscheduled. */
    std::string hand_reason;
    /** "conv2d batch=1 in_channels=3 ..." (params sorted): a stable key. */
    std::string key() const;
};

struct Step {
    std::string node;    ///< label of the node (Node::label)
    std::string name;    ///< the node's name ("#<index>" if it has none), for tables
    std::string op_type; ///< the node's operator ("Conv+Relu" when a Relu is fused)
    /** Index into LoweredGraph::layers, or -1 for a view (output aliases inputs[0]). */
    int layer = -1;
    /** A view's output starts this many elements into inputs[0] (a contiguous slice: a
     * channel range of a batch-1 NCHW tensor); 0 for a view of the whole input. */
    int64_t view_offset = 0;
    std::vector<LayerArg> inputs; ///< in the generator's input order
    LayerArg output;
    /** A step that fuses a prologue into its conv: the element counts each of the two layers
     * would read and write unfused (the affine: its input, scale and shift, and its output;
     * the conv: the affine's output, the weights, bias and residual, and its output), for the
     * per-layer roofline of the unfused layers (sw_net::LayerRecord::unfused). Empty
     * otherwise. */
    struct UnfusedPart {
        std::string generator;
        std::map<std::string, std::string> params;
        int64_t in_elements = 0;   ///< of its first input (sw_net::layer_gflop)
        int64_t read_elements = 0; ///< of its distinct inputs
        int64_t write_elements = 0;
    };
    std::vector<UnfusedPart> unfused;
};

/** How PrologueFusion::Auto decided one candidate (LoweredGraph::prologue_choices). */
struct PrologueChoice {
    std::string conv;   ///< label of the Conv node (Node::label)
    std::string affine; ///< label of the ChannelScaleShift node
    int64_t pixels = 0; ///< of the conv's input map, per image
    /** (a) the conv with the prologue; (b) the channel_affine layer and the conv without. */
    LayerSpec fused, unfused_affine, unfused_conv;
    /** Their predicted seconds per call; 0 where unknown (no coster). */
    double fused_seconds = 0, affine_seconds = 0, conv_seconds = 0;
    bool costed = false; ///< decided by the costs (false: by the map-size rule)
    bool fuse = false;
};

/** What PrologueFusion::Auto decided, counted: the candidates fused, those the costs
 * decided (the others by the map-size rule), and the distinct layers of their two forms. */
struct PrologueCounts {
    int candidates = 0, fused = 0, costed = 0;
    size_t distinct_layers = 0;
};
PrologueCounts count_prologue_choices(const std::vector<PrologueChoice> &choices);

struct LoweredGraph {
    std::vector<LayerSpec> layers;
    std::vector<Step> steps; ///< topological order
    /** Constants the lowering adds (a missing conv bias as zeros, a scalar Gemm C
     * broadcast): name -> values. The graph's own constants are read from the Graph. */
    std::map<std::string, std::vector<float>> extra_constants;
    /** PrologueFusion::Auto: each candidate of a prologue fusion, in node order, and how it
     * was decided. Empty for Always and Never. */
    std::vector<PrologueChoice> prologue_choices;
};

/** The shortest decimal that reads back as the same float (generator parameter values). */
std::string format_float(float v);

/** Parameters of conv2d / pool from a 2-D or 1-D (as height 1) window node. */
struct WindowGeometry {
    int n = 1, c = 1, h = 1, w = 1, kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pb = 0, pl = 0, pr = 0;
    int dh = 1, dw = 1;
};

/** Window geometry of a Conv / MaxPool / AveragePool node from its attributes (kernel_shape,
 * strides, pads, dilations, auto_pad) and its input shape (N, C, W) or (N, C, H, W); throws
 * NodeError if the node cannot be expressed (rank, auto_pad, dilations when !allow_dilation). */
WindowGeometry window_geometry(const Node &node, const std::vector<int64_t> &x,
                               std::vector<int64_t> kernel, bool allow_dilation);

/** batch/height/width/kernel/stride/pad params (the _y and per-side forms only where they
 * differ from the plain ones unless always_y). */
void window_params(const WindowGeometry &g, std::map<std::string, std::string> &p, bool always_y);

/** Whether a ChannelScaleShift (with the Relu fused into it) is fused into the Conv that
 * reads it, as the conv's prologue (conv2d prologue=scale_shift[_relu]).
 *   Auto: where it is predicted faster. With a LowerOptions::coster, each candidate is
 *         costed in both forms, (a) the fused conv and (b) the unfused pair, the
 *         channel_affine layer plus the conv without prologue, and fused where (a) costs less
 *         than (b). Without a coster (or where it knows no cost of a candidate's layers) the
 *         map-size rule decides: fused on maps of at least kPrologueMinPixels pixels per
 *         image, the rule measured on DenseNet-121's layers before the costing was built
 *         (fused faster on 56x56 maps, slower on 28x28 and below; the costs find that 3 of its
 *         7 candidates on 56x56 are not, and that every candidate at 32x32 input is:
 *         docs/kernels.md);
 *   Always: wherever it may be (the tests); Never: not at all (for comparisons). */
enum class PrologueFusion { Auto, Always, Never };

/** The smallest map (pixels per image) on which PrologueFusion::Auto fuses a prologue when no
 * coster decides. */
constexpr int64_t kPrologueMinPixels = 56 * 56;

/** Predicted costs of layers, for PrologueFusion::Auto: given distinct layers, the seconds of
 * one call of each, in their order (as many values as layers; a value that is not a finite
 * number > 0 means unknown). Called once per lowering, with every layer of every candidate (see
 * LowerOptions::coster), and only if there is a candidate. May throw Error. The executor's
 * implementation (graph/Executor.h, autoscheduler_coster) asks the Sunway autoscheduler for
 * the time it predicts for the plan it would choose. */
using LayerCoster = std::function<std::vector<double>(const std::vector<LayerSpec> &layers)>;

struct LowerOptions {
    PrologueFusion fuse_prologue = PrologueFusion::Auto;
    /** PrologueFusion::Auto: the costs that decide each candidate (fused where
     * fused_seconds < affine_seconds + conv_seconds); empty: the map-size rule
     * (kPrologueMinPixels). The graph is lowered twice when there is a candidate: once with
     * every candidate fused, to know each one's layers in both forms, then as decided. */
    LayerCoster coster;
    /** A head-split attention (Q.K^T, scale, mask, Softmax, .V with the heads' transposes;
     * Lowering.cpp's AttentionMatch) as one `attention` layer: the score matrix stays in LDM
     * and the transposes are never made. False: the separate layers. */
    bool fuse_attention = true;
};

/** "auto", "always" or "never" as a PrologueFusion; throws Error for anything else. */
PrologueFusion parse_prologue_fusion(const std::string &s);

/** Lowers a graph whose shapes are inferred. Throws Error naming the node. */
LoweredGraph lower_graph(const Graph &g, const LowerOptions &options = {});

} // namespace sw_graph

#endif
