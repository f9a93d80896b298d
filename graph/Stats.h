/** \file
 * Size and work of a graph with static shapes: parameters (the float32 constants that nodes
 * read) and multiply-accumulates of the operators that do most of the work (Conv, Gemm,
 * MatMul). Elementwise operators, pooling and normalisation count no MACs.
 */
#ifndef SW_GRAPH_STATS_H
#define SW_GRAPH_STATS_H

#include "graph/Graph.h"

#include <cstdint>

namespace sw_graph {

struct GraphStats {
    int64_t params = 0; ///< elements of the float32 constants read by nodes
    int64_t macs = 0;   ///< multiply-accumulates of one run of the graph
};

/** MACs of one node: Conv N*M*prod(out spatial)*(C/groups)*prod(kernel), Gemm M*N*K, MatMul
 * batch*M*N*K; 0 for every other operator or while shapes are unknown. */
int64_t node_macs(const Graph &g, const Node &node);

GraphStats graph_stats(const Graph &g);

} // namespace sw_graph

#endif
