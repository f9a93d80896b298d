/** \file
 * Broadcast DMA (or register communication, see the end), the schedule directive
 * `sw::broadcast(f)` for a Func staged in LDM whose staged box is the same for every CPE
 * (e.g. the input chunk of a fully connected layer,
 * `input.in().compute_at(acc, ro).store_in(sw::LDM)` and `sw::broadcast(input.in())`):
 * instead of 64 CPEs each reading the same bytes, CPEs 0-7 fetch them once, a piece each, with
 * `athread_get(BCAST_MODE, ...)` and they land at the same LDM address on all 64 CPEs.
 *
 * Two steps, both applied by this pass file:
 *
 *  1. apply_broadcast (after DoubleBuffer, before DelayDmaWaits): the DMA site that fills the
 *     marked buffer becomes
 *         sw_bcast_barrier();                         // nobody still reads the old contents
 *         if (sw_bcast_issuer(n)) {                   // CPEs 0 .. n - 1
 *             begin;
 *             if (sw_cpe_id() < pieces) request piece sw_cpe_id() in BCAST_MODE (mask: every
 *                                       mesh row), for each request of the site;
 *             wait                                    // each issuer for its own pieces
 *         }
 *         sw_bcast_barrier();                         // the receivers learn of the arrival
 *     which CodeGen_CPE prints as athread_syn(ARRAY_SCOPE, 0xffff) / athread_get_id(-1) < n.
 *     Each request is cut into up to kBroadcastIssuers pieces (split_broadcast: by rows, or a
 *     contiguous one by whole 128-byte lines), so that the broadcast moves at the channel's
 *     rate rather than at one CPE's; the autoscheduler's cost model prices it with the same
 *     cut.
 *     Its checks (each a UserError naming the Func): the buffer is filled by DMA; the staged
 *     box (every request's addresses, sizes and the loops that issue them) does not depend
 *     on the CPE's block variables; every loop and branch around the transfer, inside the
 *     kernel, has bounds / conditions free of the block variables, so that every CPE reaches
 *     the barriers the same number of times. A Func also double buffered (DoubleBuffer ran
 *     first: its two slots' sites) is broadcast one chunk ahead (one barrier per chunk, see
 *     the pass file); one whose staging Halide fills at more than two places is refused.
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
 *
 * Second mode, `sw::broadcast(f, sw::Sharing::RegComm)` (SW26010 only: the Pro has no
 * register communication, refused with an error): the same data shared over the 8x8 mesh by
 * register communication instead of a broadcast DMA. Step 1 turns the DMA site into
 *         if (sw_bcast_issuer()) { begin; requests in PE_MODE; wait }   // CPE (0, 0) only
 *         sw_regcomm_share(buffer, bytes);                              // every CPE
 * which CodeGen_CPE prints as a call of a static C helper, sw_regcomm_share, emitted once per
 * file: CPE (0, 0) loads each floatv4 of its buffer and sends it along its row and its
 * column (simd_putr / simd_putc to destination 8, "the whole row / column"); CPEs (0, c > 0)
 * receive it with simd_getr, store it and forward it down their column (simd_putc); CPEs
 * (r > 0, c) receive it with simd_getc and store it. A byte count that is not a multiple of
 * 16 ends with one vector built from (and stored back to) a 16-byte local, so no access
 * leaves the buffer. What is shared is the whole LDM buffer (its allocation size, what the
 * DMA site may write), right after the get and before what InjectDma writes after it (the
 * padding of a zero-padded window, the spreading of a compact box): that part still runs on
 * every CPE, as with the DMA, so every receiver ends with the bytes the DMA would have left.
 * No barrier: a receiver overwrites its buffer only when it executes its get, after it has
 * finished reading the old contents, and a send waits while a receive buffer is full. The
 * sharing step is a collective like the barrier: step 2 applies in the same way (every CPE
 * runs the same number of block rounds; one past the last block still forwards and
 * receives). The buffer need not lie at the same address on every CPE. The loads, stores and
 * loop of the helper are counted by WorkCount (regcomm_share_work), the puts and gets are
 * timed by the emulator (Machine::regcomm).
 *
 * Third and fourth modes, `Sharing::RegCommRow` and `Sharing::RegCommColumn` (the operands of a
 * register-communication GEMM, schedules/matmul_schedule.h): a staging the 8 CPEs of each mesh
 * row (column) need, fetched in PE_MODE by the row's CPE in column 0 (the column's CPE in row
 * 0) and passed on by sw_regcomm_row / sw_regcomm_column (simd_putr / simd_putc to the whole
 * row / column, simd_getr / simd_getc on the 7 others). The CPEs take blocks round * 64 + id,
 * id = row * 8 + col, so with an innermost block loop of 8 iterations a block's innermost
 * variable is its CPE's column and the others depend on its row and round only (one with a
 * multiple of 8 block iterations inside it, the innermost left out, is the same down a column
 * for a whole round): the staged box of a row sharing must not depend on the innermost block
 * variable, that of a column sharing on the others but those. Refused otherwise, and where the
 * innermost block loop has other than 8 iterations. The blocks need not fill the last round:
 * as with any sharing, every CPE runs every round and one past the last block still takes
 * part (a mesh row past the last block is past it whole, its source fetching the last
 * block's box; a column's source, in row 0, always has a block).
 *
 * Fifth mode, `Sharing::DmaRow`: a staging the 8 CPEs of each mesh row need (the same boxes
 * and mesh-block checks as RegCommRow), broadcast to that row by DMA: the groups of the
 * Sharing::Dma mode (barriers of the core group, one chunk ahead when double buffered), but
 * each request is cut among the row's CPEs (piece = the CPE's column, issuer condition
 * `athread_get_id(-1) % 8 < n`) and its BCAST_MODE mask is the row's bit, `1 << (id / 8)`: the
 * eight rows' broadcasts move at once, each crossing the channel once, and no CPE passes
 * anything on. The weights of a dense layer whose output columns go down the mesh rows.
 *
 * Any register-communication mode may be double buffered too: the source CPE(s) request chunk
 * 0 before the loop; in iteration i they wait for slot i and request chunk i + 1 into the
 * other slot, then every CPE shares slot i (the helper called at the slot's offset, with
 * CpeKernel::slot_bytes bytes). No barrier: a receiver writes a slot only in its sharing,
 * after computing from the other slot; a source refills a slot after computing from it and
 * passing it on.
 */
#ifndef SW_BROADCAST_DMA_H
#define SW_BROADCAST_DMA_H

#include "Halide.h"
#include "target_sw/Directives.h"
#include "target_sw/SwModule.h"

#include <map>
#include <string>

namespace sw {

/* The schedule directive sw::broadcast(f, how) is declared in Directives.h: fetch the LDM
 * staging of f once per core group, by one CPE, and deliver it to all 64, by broadcast DMA
 * (Sharing::Dma: BCAST_MODE, between barriers) or by register communication
 * (Sharing::RegComm: one PE_MODE get by CPE (0, 0) passed along the mesh), or to the CPEs of
 * each mesh row or column (Sharing::RegCommRow / RegCommColumn; Sharing::DmaRow: to each row
 * by broadcast DMA). f is the staged wrapper, e.g. `input.in()`. Marking a Func again replaces
 * its mode. */

/** Step 1: turns the DMA sites of the buffers named in \p d.shared into broadcasts (see the
 * file comment); a buffer also in \p d.double_buffered is refused. */
void apply_broadcast(CpeKernel &k, const Machine &m, const Directives &d);

/** Step 2: in a kernel with a broadcast, every CPE runs the same number of block rounds. */
void make_block_loop_uniform(CpeKernel &k);

/** CPEs that issue the pieces of one broadcast DMA: one CPE's DMA is capped well below the
 * core group's channel (DmaTiming::cpe_cap_bytes_per_cycle), so a broadcast issued by CPE 0
 * alone would leave the channel two-thirds idle; eight issuers (CPEs 0-7, mesh row 0)
 * saturate it. A choice of the code generator, not a machine limit. */
constexpr int kBroadcastIssuers = 8;

/** How one broadcast request is cut among its issuers: CPE p issues piece p. A strided request
 * (several blocks with gaps) is cut by rows, `per` rows a piece; a contiguous one by elements,
 * `per` elements a piece, a whole number of 128-byte lines and at least 1 KB. One piece: not cut.
 */
struct BroadcastSplit {
    int pieces = 1;
    int64_t per = 0; ///< rows (by_rows) or elements of a piece; the last piece may be shorter
    bool by_rows = false;
};
BroadcastSplit split_broadcast(int64_t rows, int64_t block_elems, bool contiguous, int elem_bytes);

/** Whether \p k's body contains a broadcast of either mode (its block loop must then be
 * printed uniform). */
bool has_broadcast(const CpeKernel &k);

/* The intrinsics of the broadcast (sw_bcast_barrier, sw_bcast_issuer, sw_regcomm_share) and
 * the variable sw_active are named, built and matched in SunwayIR.h. */

} // namespace sw

#endif
