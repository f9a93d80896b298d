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

/** nn.LayerNorm as torch.onnx writes it below opset 17 (ConvNeXt's, Swin's, ViT's): mean =
 * ReduceMean(x) over the last axis (keepdims), d = Sub(x, mean), var = ReduceMean(Pow(d, 2)
 * or Mul(d, d)), Div(d, Sqrt(Add(var, eps))), then optionally Mul by a constant gamma and Add
 * a constant beta (either order of operands), each intermediate read only by the next (d
 * twice) and no graph output -> one LayerNormalization (axis -1, epsilon eps; gamma of ones
 * and beta of zeros where absent). Returns the number of LayerNormalizations made. */
int fuse_layer_norm(Graph &g);

/** A Transpose of a Transpose read by nothing else (Swin's k.transpose(-2, -1) of the
 * transposed key) -> one Transpose by the composed permutation. Returns the number of
 * Transposes removed. */
int fuse_consecutive_transposes(Graph &g);

/** A Softmax (opset >= 13) over an axis other than the last, or a ReduceMean / ReduceMax /
 * ReduceSum over axes that are not the trailing ones, made Transpose (those axes moved last,
 * the others in order) + the same operator over the trailing axes (+ a Transpose back for the
 * Softmax, a Reshape to the output's shape for a reduction): the layers reduce only the last
 * axes. Returns the number of nodes rewritten. */
int move_reduced_axes_last(Graph &g);

/** Removes the nodes none of whose outputs reach a graph output, and the tensors no node
 * nor the graph's interface uses any more. Graph inputs stay even if unused. */
int eliminate_dead_nodes(Graph &g);

/** A Transpose read only by Gathers of one constant index along its output's first axis
 * (Swin's q, k, v = qkv.permute(2, 0, 3, 1, 4)[i]): each Gather becomes a Gather along the
 * input axis the first output axis comes from and a Transpose of the rest, one rank lower.
 * Returns the number of Transposes split. */
int split_transpose_before_gathers(Graph &g);

/** Space to depth written as strided slices: a Concat along the last axis of K Slices of one
 * tensor x, each with the same steps s_1..s_m (m >= 1) on the same other axes, begins below
 * the steps, the axes divisible by their steps, every offset combination once, in the
 * row-major order of the axes in some order (Swin's patch merging: x[..., 0::2, 0::2, :],
 * x[..., 1::2, 0::2, :], x[..., 0::2, 1::2, :], x[..., 1::2, 1::2, :] concatenated) ->
 * Reshape (each stepped axis split into (dim / s, s)), Transpose (the s axes moved before
 * the last axis), Reshape. Returns the number of Concats replaced. */
int fuse_space_to_depth(Graph &g);

/** The passes in order: remove_identities, fold_pad_into_window, fold_batch_norm,
 * fuse_channel_shuffle, fuse_concat_into_shuffle, fuse_hard_swish, fuse_gelu,
 * eliminate_dead_nodes. Returns one line per pass ("fold_batch_norm: 3 nodes") for logs. */
std::vector<std::string> run_passes(Graph &g);

} // namespace sw_graph

#endif
