/** \file
 * Broadcast DMA, the schedule directive `sw::broadcast(f)` for a Func staged in LDM whose
 * staged box is the same for every CPE (e.g. the input chunk of a fully connected layer,
 * `input.in().compute_at(acc, ro).store_in(sw::LDM)` and `sw::broadcast(input.in())`):
 * instead of 64 CPEs each reading the same bytes, one CPE (CPE 0) fetches them once with
 * `athread_get(BCAST_MODE, ...)` and they land at the same LDM address on all 64 CPEs.
 *
 * Two steps, both applied by this pass file:
 *
 *  1. apply_broadcast (after DoubleBuffer, before DelayDmaWaits): the DMA site that fills the
 *     marked buffer becomes
 *         sw_bcast_barrier();                         // nobody still reads the old contents
 *         if (sw_bcast_issuer()) { begin; requests in BCAST_MODE (mask: every mesh row); wait }
 *         sw_bcast_barrier();                         // the receivers learn of the arrival
 *     which CodeGen_CPE prints as athread_syn(ARRAY_SCOPE, 0xffff) / athread_get_id(-1) == 0.
 *     Its checks (each a UserError naming the Func): the buffer is filled by DMA; the staged
 *     box (every request's addresses, sizes and the loops that issue them) does not depend
 *     on the CPE's block variables; every loop and branch around the transfer, inside the
 *     kernel, has bounds / conditions free of the block variables, so that every CPE reaches
 *     the barriers the same number of times; the Func is not also double buffered (not
 *     supported: the prefetch of iteration i+1 would need the broadcast and its barriers one
 *     iteration ahead, refused rather than done wrong).
 *
 *  2. make_block_loop_uniform (the last pass): the CPEs take the blocks cyclically,
 *     `for (b = id; b < blocks; b += 64)`, which runs a different number of times on
 *     different CPEs when blocks is not a multiple of 64, and a barrier would then deadlock.
 *     In a kernel with a broadcast every CPE runs ceil(blocks / 64) rounds instead; in a round
 *     past the end (variable sw_active false) a CPE takes the last block's indices but skips
 *     all work (wrapped in `if (sw_active)`): it still allocates the same LDM buffers in the
 *     same order, meets every barrier and, on CPE 0, issues every broadcast.
 *
 * The LDM buffer lies at the same address on every CPE because every CPE runs the same code:
 * the allocations around a broadcast are outside every `if (sw_active)` and run on every CPE
 * in the same order, and a skipped subtree allocates and frees in balance (ldm_malloc is a
 * stack), so each CPE's ldm_malloc sequence before a broadcast is the same.
 */
#ifndef SW_BROADCAST_DMA_H
#define SW_BROADCAST_DMA_H

#include "Halide.h"
#include "target_sw/SwModule.h"

#include <set>
#include <string>

namespace sw {

/** The schedule directive: fetch the LDM staging of \p f once per core group, by one CPE,
 * delivered to all 64 (BCAST_MODE). \p f is the staged wrapper, e.g. `input.in()`. */
void broadcast(const Halide::Func &f);

/** The Funcs marked by broadcast in this process. */
std::set<std::string> broadcast_funcs();

/** Puts the marks back as they were. */
void restore_broadcast_funcs(const std::set<std::string> &marked);

/** Step 1: turns the DMA sites of marked buffers into broadcasts (see the file comment). */
void apply_broadcast(CpeKernel &k, const Machine &m);

/** Step 2: in a kernel with a broadcast, every CPE runs the same number of block rounds. */
void make_block_loop_uniform(CpeKernel &k);

/** Whether \p k's body contains a broadcast (its block loop must then be printed uniform). */
bool has_broadcast(const CpeKernel &k);

/** Intrinsics of the broadcast: a barrier over the core group, and "this CPE issues". */
constexpr const char *bcast_barrier_intrinsic = "sw_bcast_barrier";
constexpr const char *bcast_issuer_intrinsic = "sw_bcast_issuer";
/** Bool variable of a uniform block loop: this round's block exists on this CPE. */
constexpr const char *block_active_var = "sw_active";

}  // namespace sw

#endif
