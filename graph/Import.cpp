#include "graph/Import.h"

#include "graph/OnnxReader.h"
#include "graph/Passes.h"

namespace sw_graph {

Graph import_onnx(const std::string &path, const ImportOptions &options,
                  std::vector<std::string> *log) {
    Graph g = read_onnx_file(path);
    infer_shapes(g, options.inference);
    if (options.run_passes) {
        std::vector<std::string> lines = run_passes(g);
        if (log)
            log->insert(log->end(), lines.begin(), lines.end());
    }
    return g;
}

} // namespace sw_graph
