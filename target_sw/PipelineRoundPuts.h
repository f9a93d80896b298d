/** \file
 * Pass 9 of the Sunway lowering (the last): a CPE's rounds of blocks pipelined, each block's
 * put spread over the next block's chunk loop from a second LDM slot of the output tile.
 *
 * Why: the CPEs take the blocks in rounds of 64 (block = round * 64 + id). Each block waited
 * for its put before the next began, so while the CPEs put a round's outputs the channel moved
 * only puts and no CPE computed, and while they computed the next round it moved little
 * (ResNet-50's stem, 7x7 stride 2 on the mesh in 4 rounds: a round computed for 135k cycles,
 * then waited 108k for its put).
 *
 * The rule (SW26010 only, see the pass file): a kernel whose blocks are a constant multiple
 * (>= 2) of the core group's CPEs, so
 * that every CPE runs the same rounds and every round is active (in a kernel with a
 * broadcast, make_block_loop_uniform's `if (sw_active)` is then always taken and dropped), and
 * whose body has one put site. Its rounds become a serial loop in the IR, the block variables
 * bound at its top from round * 64 + id as CodeGen_CPE binds them, and PipelineTilePuts' rule
 * is applied to that loop (pipeline_loop_puts: the block's output tile in two slots, its put
 * in pieces after each chunk's prefetch in the next block, the last block's whole after the
 * loop). Where it holds the kernel keeps the loop (CpeKernel::rounds_in_body: CodeGen_CPE
 * prints it instead of its own loop over the blocks); elsewhere the kernel is left as it was.
 */
#ifndef SW_PIPELINE_ROUND_PUTS_H
#define SW_PIPELINE_ROUND_PUTS_H

#include "target_sw/Machine.h"
#include "target_sw/SwModule.h"

namespace sw {

void pipeline_round_puts(CpeKernel &k, const Machine &m);

} // namespace sw

#endif
