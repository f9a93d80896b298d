/** \file
 * Graph passes on a Graph whose shapes are inferred (ShapeInference). Each pass states the
 * pattern it matches and the conditions it checks, returns how many nodes it rewrote, and
 * leaves the graph sorted with every shape still valid. run_passes runs them in order.
 */
#ifndef SW_GRAPH_PASSES_H
#define SW_GRAPH_PASSES_H

#include "graph/Graph.h"

#include <string>
#include <vector>

namespace sw_graph {

/** Removes Identity, Dropout (inference: an identity; ShapeInference has rejected a used
 * mask), Cast to the type it already has and Pad whose pads are all 0. Readers of the output read
 * the input instead; when the output is a graph output, the input's producer is renamed to write it
 * (the graph's output names do not change). Kept: a node whose input is a graph input or a constant
 * and whose output is a graph output. */
int remove_identities(Graph &g);

/** Pad (mode constant, value 0, constant pads >= 0 on the spatial axes only) whose output only
 * an AveragePool or a Conv reads (as its input x, and is no graph output) -> that node reading
 * the Pad's input, the Pad's pads added to its own. An AveragePool takes count_include_pad = 1
 * (the padded zeros were counted as values); one with pads of its own and count_include_pad = 0,
 * or with ceil_mode, is left alone. torch.onnx exports F.avg_pool2d(x, 3, 1, padding=1)
 * (count_include_pad) as Pad + AveragePool this way (Inception-v3). */
int fold_pad_into_window(Graph &g);

/** BatchNormalization(Conv(x, W, b), gamma, beta, mean, var) -> Conv(x, W', b') with
 * s = gamma / sqrt(var + epsilon), W'[m] = W[m] * s[m], b' = (b - mean) * s + beta, when the
 * conv's output is read only by that BN (and is no graph output) and W, b and the BN
 * parameters are constants. Weights shared with another node are copied, not changed.
 * Other BNs with constant parameters become ChannelScaleShift (domain sw_graph): y = x *
 * scale[c] + shift[c]. Computed in double, stored as float32. */
int fold_batch_norm(Graph &g);

/** Reshape (N, C, H, W) -> (N, g, C/g, H, W), Transpose perm (0, 2, 1, 3, 4), Reshape back to
 * (N, C, H, W) (ShuffleNet's channel shuffle as torch.onnx exports it) -> ChannelShuffle
 * (domain sw_graph, attribute groups = g), when each intermediate tensor has that one
 * reader and is no graph output. */
int fuse_channel_shuffle(Graph &g);

/** Concat (axis 1) of g inputs of N x C/g x H x W each -> ChannelShuffle (groups = g), when the
 * concat's output has that one reader and is no graph output (ShuffleNetV2's units): the
 * shuffle takes the g inputs and interleaves their channels, output channel i * g + j =
 * channel i of input j, so the concatenated tensor is never written. */
int fuse_concat_into_shuffle(Graph &g);

/** HardSigmoid(x) (alpha, beta) whose output only a Mul by x reads (either order), and is
 * no graph output -> HardSwish (domain sw_graph, attributes alpha and beta): x * max(0, min(1,
 * alpha * x + beta)). torch.onnx below opset 14 exports PyTorch's Hardswish this way
 * (alpha = 1/6, beta = 0.5: MobileNetV3). */
int fuse_hard_swish(Graph &g);

/** PyTorch's exact GELU as torch.onnx exports it, x * 0.5 * (1 + Erf(x / sqrt 2)): Div(x, sqrt 2)
 * (or Mul(x, 1 / sqrt 2)) -> Erf -> Add 1 -> Mul x -> Mul 0.5, or the 0.5 first (Mul(x, 0.5)
 * times the Add; constants on either side of the commutative nodes), each intermediate read
 * only by the next and no graph output -> Gelu (domain sw_graph, approximate = "none"). The
 * tanh approximation the same way (nn.GELU(approximate="tanh"), GPT-2's): Tanh(sqrt(2 / pi) *
 * (x + 0.044715 * x^3)) with x^3 as x * (x * x) or Pow(x, 3), then Add 1, Mul x, Mul 0.5 ->
 * Gelu approximate = "tanh". */
int fuse_gelu(Graph &g);

/** Removes the nodes none of whose outputs reach a graph output, and the tensors no node
 * nor the graph's interface uses any more. Graph inputs stay even if unused. */
int eliminate_dead_nodes(Graph &g);

/** The passes in order: remove_identities, fold_pad_into_window, fold_batch_norm,
 * fuse_channel_shuffle, fuse_concat_into_shuffle, fuse_hard_swish, fuse_gelu,
 * eliminate_dead_nodes. Returns one line per pass ("fold_batch_norm: 3 nodes") for logs. */
std::vector<std::string> run_passes(Graph &g);

} // namespace sw_graph

#endif
