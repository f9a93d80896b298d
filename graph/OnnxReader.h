/** \file
 * Reads an ONNX model (Debian's libonnx-dev protobuf classes) into a Graph: graph inputs and
 * outputs with their declared shapes (a dim_param or missing dim becomes -1, dynamic),
 * initializers as constants (float32; int64, int32 and bool as integers), nodes with their
 * typed attributes, sorted topologically.
 *
 * Checks here: the file is a readable ONNX protobuf with a graph, an IR version in
 * [kMinIrVersion, kMaxIrVersion] and a default-domain opset in [kMinOpset, kMaxOpset]; every
 * tensor's dims are non-negative and its element count matches its data before anything is
 * allocated (a corrupted file claiming huge dims fails cleanly); no external data; no cycle,
 * no input without a producer. Not checked here: operators, attributes and shapes
 * (ShapeInference does that). The header does not expose protobuf.
 */
#ifndef SW_GRAPH_ONNX_READER_H
#define SW_GRAPH_ONNX_READER_H

#include "graph/Graph.h"

#include <string>

namespace sw_graph {

constexpr int64_t kMinIrVersion = 3;  ///< the first IR version with opset_import
constexpr int64_t kMaxIrVersion = 10; ///< ONNX 1.16's
/** Opsets from 1 on: where an older opset's operator differs, it does so by attributes
 * (legacy broadcast and axis, Reshape's shape, Cast's string type), which ShapeInference
 * rejects by name unless it knows their meaning. */
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 18; ///< the operator forms ShapeInference knows go up to 18

/** Reads the model at `path`; throws Error ("error: <path>: ...") on any problem. */
Graph read_onnx_file(const std::string &path);

/** Reads a serialised ModelProto; `source` names it in messages and in Graph::source. */
Graph read_onnx_bytes(const std::string &bytes, const std::string &source);

/** Reads one serialised TensorProto (the input_K.pb / output_K.pb files of ONNX test data) as
 * a constant Tensor, with the same checks as initializers. Throws Error naming `path`. */
Tensor read_onnx_tensor_file(const std::string &path);

} // namespace sw_graph

#endif
