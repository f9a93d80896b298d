#include "graph/Stats.h"

#include <set>

namespace sw_graph {

namespace {

const Tensor *shaped(const Graph &g, const std::string &n) {
    const Tensor *t = n.empty() ? nullptr : g.find(n);
    return t && t->is_static() ? t : nullptr;
}

} // namespace

int64_t node_macs(const Graph &g, const Node &node) {
    if (node.op_type == "Conv") {
        const Tensor *w = shaped(g, node.input(1));
        const Tensor *y = shaped(g, node.output(0));
        if (!w || !y || w->shape.size() < 2)
            return 0;
        // y: N x M x spatial; w: M x C/groups x kernel: each output reads C/groups*kernel.
        int64_t per_output = 1;
        for (size_t i = 1; i < w->shape.size(); i++)
            per_output *= w->shape[i];
        return y->elements() * per_output;
    }
    if (node.op_type == "Gemm") {
        const Tensor *a = shaped(g, node.input(0));
        const Tensor *y = shaped(g, node.output(0));
        if (!a || !y || a->shape.size() != 2)
            return 0;
        int64_t k = node.attr_int("transA", 0) ? a->shape[0] : a->shape[1];
        return y->elements() * k;
    }
    if (node.op_type == "MatMul") {
        const Tensor *a = shaped(g, node.input(0));
        const Tensor *y = shaped(g, node.output(0));
        if (!a || !y || a->shape.empty())
            return 0;
        return y->elements() * a->shape.back();
    }
    return 0;
}

GraphStats graph_stats(const Graph &g) {
    GraphStats s;
    std::set<std::string> counted;
    for (const Node &node : g.nodes) {
        for (const std::string &in : node.inputs) {
            const Tensor *t = in.empty() ? nullptr : g.find(in);
            if (t && t->is_constant && t->dtype == DType::Float32 && counted.insert(in).second) {
                s.params += (int64_t)t->f32.size();
            }
        }
        s.macs += node_macs(g, node);
    }
    return s;
}

} // namespace sw_graph
