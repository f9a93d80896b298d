/** \file
 * Part of pass 1 of the Sunway lowering (FindCpeKernels): undoes Halide's loop partitioning
 * between and under the block loops of a CPE kernel.
 *
 * When a tile does not divide its dimension (ViT's 197 tokens in tiles of 28), Halide's
 * ShiftInwards split clamps the last tile, and its loop partitioning then duplicates the
 * body of the enclosing block loop: `if (n_o < 7) {gpu_block o_o {A}} else {gpu_block o_o
 * {B}}`, A with the clamp simplified away, B with the clamped value. A CPE kernel needs its
 * block loops adjacent, and its stagings filled at one place (DMA broadcasts, double
 * buffering). When A and B have the same structure, the two become one body in which each
 * expression that differs is `select(condition, a, b)` (a scalar; vectors are merged through
 * their ramps, broadcasts and loads): the same values, computed once per CPE.
 */
#ifndef SW_MERGE_BLOCK_PARTITIONS_H
#define SW_MERGE_BLOCK_PARTITIONS_H

#include "target_sw/SunwayIR.h"

namespace sw {

/** \p s (the body of a block loop) with its leading partition merged: lets, then
 * `if (c) {A} else {B}` with A and B of the same structure, become the lets and one merged
 * body (repeated while the result starts that way, for a prologue and an epilogue); lets
 * before a block loop whose bounds do not use them are moved into its body. Anything else is
 * returned unchanged. */
Halide::Internal::Stmt merge_block_partitions(const Halide::Internal::Stmt &s);

} // namespace sw

#endif
