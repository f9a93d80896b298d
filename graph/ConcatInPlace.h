/** \file
 * ConcatInPlace: a pass on the lowered graph (after lower_graph) that removes the copies of
 * Concat. Lowering turns each Concat into `concat` layers that copy every input into the
 * output (and a Concat of more than 7 inputs into concats of 7 into temporaries, level by
 * level). Where an input's producer can write straight into the input's slice of the
 * concat's output buffer, this pass makes it do so: the producer's output tensor becomes a
 * slice of that buffer (LoweredGraph tensor -> root tensor + offset), and the concat step
 * becomes a step without a layer, op "Concat (in place)": no layer call, no copy. Readers
 * of an input read its slice (the same memory), readers of the output read the whole.
 *
 * When an input can be produced in place:
 *  - the slice is contiguous in memory: the dims before the concat axis are all 1 (batch 1
 *    for a channel concat). With batch > 1 a channel slice is strided, and the generated
 *    layers take dense buffers only (sw::set_dense_shape fixes every stride), so such a
 *    concat keeps its copying layers (doing better would need layers generated for strided
 *    outputs);
 *  - the input's storage (the input itself, or the tensor it is a view of: Flatten,
 *    Reshape, a one-input Concat) is written by a layer step: not a graph input nor a
 *    constant;
 *  - that storage has no other place yet: a tensor goes into one slice only. Concats are
 *    decided from the last to the first, so when a tensor is in several concats (DenseNet:
 *    each dense layer concatenates every earlier feature of its block) it takes its place
 *    in the last one, the block's full concat. An earlier concat whose inputs all sit
 *    already, in its order and contiguously, in one buffer is then a view of that range
 *    (DenseNet's growing concats are prefixes of the block's buffer: nothing is written).
 * Nesting composes: a concat's output that is itself an input of a later concat is a slice
 * of the later one's buffer, and its own inputs are slices of that slice (the >7-input
 * levels are flattened first: the temporaries disappear with their copies).
 *
 * An input that cannot be produced in place (a graph input, a constant, a tensor placed in
 * another concat or twice in this one) is copied into its slice by a `channel_slice` layer
 * (begin 0, all channels: a plain copy), op "Concat (copy input)", while the other inputs
 * stay in place. A concat none of whose inputs can be placed keeps its `concat` layers.
 *
 * Nothing is overwritten: every tensor is written once (the lowered graph is in SSA form),
 * each placed tensor owns its own slice, and the slices of one buffer are disjoint. The
 * Executor keeps a root's buffer for the whole run; the export (Export.h) keeps it alive
 * from the first step that writes any slice of it to the last step that reads any tensor
 * in it.
 */
#ifndef SW_GRAPH_CONCAT_IN_PLACE_H
#define SW_GRAPH_CONCAT_IN_PLACE_H

#include "graph/Lowering.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sw_graph {

/** The op_type of a concat step that the pass made in place (no layer). */
extern const char *const kConcatInPlaceOp;
/** The op_type of a step that copies one input into its slice of an in-place concat. */
extern const char *const kConcatCopyInputOp;

/** Where a tensor lives: `offset` floats into the buffer of tensor `root`. */
struct TensorSlice {
    std::string root;
    int64_t offset = 0;
};

/** What the pass did, for the report and the tests. Byte counts are the bytes the concat
 * and copy layers write (each also reads as many). */
struct ConcatInPlaceStats {
    int concats = 0;       ///< Concat nodes of two or more inputs
    int in_place = 0;      ///< made in place (with or without copied inputs)
    int views = 0;         ///< of those, nothing written: the inputs were in place already
    int copying = 0;       ///< kept their concat layers
    int copied_inputs = 0; ///< inputs copied into their slice (channel_slice steps)
    int concat_calls_before = 0, concat_calls_after = 0;     ///< concat layer steps
    int64_t copied_bytes_before = 0, copied_bytes_after = 0; ///< by concat and copy steps
    /** One line per concat kept copying or with copied inputs: "node: why". */
    std::vector<std::string> notes;
};

/** The storage plan of the in-place concats. */
struct ConcatPlacement {
    /** Tensors that live inside another tensor's buffer (the producers' outputs and the
     * in-place concats' outputs that are themselves slices). Views are not listed: a view
     * shares the storage of the tensor it views. */
    std::map<std::string, TensorSlice> slices;
    /** Buffers that slices live in: root tensor -> its elements. */
    std::map<std::string, int64_t> roots;
    ConcatInPlaceStats stats;

    /** The slice of `tensor`, or {tensor, 0} if it is a root or lives on its own. */
    TensorSlice slice_of(const std::string &tensor) const;
    /** Whether `tensor`'s storage is planned here (a slice or a root): its step writes into,
     * or (without a layer) just names, a buffer of the plan. */
    bool placed(const std::string &tensor) const {
        return slices.count(tensor) || roots.count(tensor);
    }
};

/** Rewrites `lw` (steps and layers) as described above and returns the plan. */
ConcatPlacement place_concats_in_place(const Graph &g, LoweredGraph &lw);

/** A plan that places nothing (the pass switched off): the lowered graph is unchanged. */
ConcatPlacement no_concat_placement(const LoweredGraph &lw);

} // namespace sw_graph

#endif
