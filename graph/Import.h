/** \file
 * The importer's front door: read an ONNX file, infer static shapes (folding shape
 * arithmetic), run the graph passes. What sw_graph_inspect prints and what later stages
 * (operator planning, execution, export) start from.
 */
#ifndef SW_GRAPH_IMPORT_H
#define SW_GRAPH_IMPORT_H

#include "graph/Graph.h"
#include "graph/ShapeInference.h"

#include <string>
#include <vector>

namespace sw_graph {

struct ImportOptions {
    InferenceOptions inference;
    bool run_passes = true;
};

/** read_onnx_file, infer_shapes, run_passes (unless disabled). Throws Error. If `log` is
 * given, the passes' one-line summaries are appended to it. */
Graph import_onnx(const std::string &path, const ImportOptions &options = {},
                  std::vector<std::string> *log = nullptr);

} // namespace sw_graph

#endif
