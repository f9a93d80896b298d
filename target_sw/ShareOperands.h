/** \file
 * Pass 7 of the Sunway lowering: loads an operand that a straight run of statements uses
 * several times once.
 *
 * An unrolled register block (e.g. 4 vectors of pixels x 4 output channels) repeats each
 * input vector in the update of every channel and each weight splat in the update of every
 * pixel vector. In a run of consecutive stores that write no LDM buffer they read (the
 * accumulators are registers, PromoteAccumulators), every vector load from the LDM and
 * every splat that occurs more than once is bound to a C local just before its first use
 * and reused: the generated code itself loads each operand once, rather than trusting the
 * C compiler to merge the loads, and the work counting (WorkCount.h) charges it once.
 * First it drops every LetStmt whose variable nothing uses any more, chains of them included
 * (the accumulators' former indices once PromoteAccumulators has made them registers, index
 * lets of stagings whose accesses became DMA): between two stores they would split the run
 * (a block of one vector x 12 channels then loaded its vector 12 times), and the generated C
 * would compute values nothing reads.
 */
#ifndef SW_SHARE_OPERANDS_H
#define SW_SHARE_OPERANDS_H

#include "target_sw/SwModule.h"

namespace sw {

void share_operands(CpeKernel &k);

} // namespace sw

#endif
