/** \file
 * Counting the work of straight-line CPE code for the timing model.
 *
 * The CPE code generator calls count_straight_line on each loop body, branch and kernel
 * body, and emits the counts as one SW_WORK(...) line at the start of that region (emulator
 * builds add them to the CPE's counters; the real toolchain compiles them away). Nested
 * loops and branches are regions of their own and are not counted in their parent.
 *
 * Rules, by SW26010 pipeline (see Machine.h for the cycle costs and their sources):
 *   P0 (floating point / vector): float add, sub, mul, a fused a*b+c (2 flops, 1 op), div,
 *       min/max/select/compare on floats (a floatv4 min or max is two: the subtraction and
 *       the select, simd_vsellts, whose pipeline no source names [U]), int<->float casts,
 *       math calls.
 *   P1 (load/store/branch): every scalar load and store (LDM or main memory; registers
 *       introduced by PromoteAccumulators cost nothing); a floatv4 load or store proved
 *       aligned (AlignVectorAccesses.h) is printed as simd_load/simd_store, one instruction,
 *       any other as simd_loadu/simd_storeu, Machine::unaligned_vector_access_p1 (two:
 *       vlds_ul + vlds_uh); a strided floatv4 load (a gather: four scalar loads and a
 *       simd_set_floatv4) 4 + Machine::splat_p1; a splat of an LDM value is simd_loade,
 *       one instruction (ldse);
 *       a splat of any other value (simd_set_floatv4) Machine::splat_p1 instructions (the
 *       real simd.h builds it through a union in memory); the compare-and-branch of each loop
 *       iteration and each if.
 *   either pipeline: integer arithmetic, compares and logic; the increment of each loop
 *       iteration. Integer division or modulo by a non-constant counts 4. An integer
 *       subexpression that occurs again in the same region is counted once (a compiler
 *       computes it once). An address is reassociated as compilers do: its constant terms
 *       are free (the displacement of the load or store), and in a loop body its terms
 *       that do not depend on the loop are summed once outside the loop; the rest costs one
 *       add per term (after the first) plus one for that invariant base, shared by the
 *       accesses with the same variable part. In a loop body, any integer work that does not
 *       depend on the loop variable is free (hoisted out of the loop, as compilers do).
 *   slow cycles: float division, sqrt, exp, log, pow, and every direct main-memory access.
 * Flops are float add/sub/mul/div (an FMA counts 2), times the vector lanes.
 * The intrinsics of DMA and broadcasts are not counted (the emulator times them); the
 * register-communication sharing of sw::broadcast(f, Sharing::RegComm) is counted by
 * regcomm_share_work (its loads, stores and loops; its puts and gets the emulator times).
 *
 * Dependency chains: the CPE issues in order and a floating-point result is ready only
 * Machine::fp_latency_cycles after its instruction issues, so a region takes at least its
 * longest chain of dependent floating-point operations times that latency. A load from a
 * place the region stored before (an accumulator, in LDM or a register) continues the chain
 * of the stored value; so does a variable bound to a value.
 *
 * A region then takes region_cycles(): the issue bound max(P0, P1, ceil((P0 + P1 + either)
 * / 2)), the chain bound, whichever is larger, plus the slow cycles. The bound is applied to
 * each region on its own (what one region leaves idle on a pipeline is not filled by another).
 *
 * That issue bound assumes the compiler pairs every P0 instruction with a P1 one that it can
 * (ideal dual issue); no measurement of sw5cc-compiled SIMD loops on a CPE is public, and
 * swDNN reordered its assembly by hand to get the pairing. The other end of that band is
 * region_unpaired_cycles(): the same region if no two instructions paired, one instruction a
 * cycle, max(P0 + P1 + either, chain bound) + slow cycles. It is never below region_cycles()
 * and equals it when the region has only P0 or only P1 instructions (and no `either` ones),
 * or when its chain bounds it either way. The generated code reports both (SW_WORK's last
 * argument) and the emulator gives both kernel times (athread_emu.h, "no pairing"); the
 * autoscheduler's cost model both estimates (autoscheduler/CostModel.h).
 */
#ifndef SW_WORK_COUNT_H
#define SW_WORK_COUNT_H

#include "Halide.h"
#include "target_sw/Machine.h"

#include <cstdint>
#include <set>
#include <string>

namespace sw {

struct Work {
    int64_t p0 = 0, p1 = 0, either = 0, slow_cycles = 0, flops = 0, ldm_accesses = 0,
            direct_accesses = 0;
    int64_t chain = 0; ///< longest chain of dependent floating-point operations
    bool empty() const {
        return !p0 && !p1 && !either && !slow_cycles && !flops && !ldm_accesses && !direct_accesses;
    }
};

/** Cycles one execution of a region with work \p w takes (see the rules above): ideal dual
 * issue, max(P0, P1, ceil((P0 + P1 + either) / 2), chain bound) + slow cycles. */
int64_t region_cycles(const Work &w, const Machine &m);

/** Cycles the same execution takes if no P0 and P1 instructions pair (one instruction a
 * cycle): max(P0 + P1 + either, chain bound) + slow cycles; >= region_cycles(w, m). */
int64_t region_unpaired_cycles(const Work &w, const Machine &m);

/** The work of \p region without the bodies of its loops and branches; \p loop_body adds
 * one loop iteration's overhead, and integer work that does not depend on \p loop_var (the
 * loop's variable, when the region is a loop body) is taken as hoisted out of the loop. Loads and
 * stores of \p ldm_buffers are LDM accesses; any other buffer is main memory. */
Work count_straight_line(const Halide::Internal::Stmt &region, bool loop_body,
                         const std::set<std::string> &ldm_buffers, const Machine &m,
                         const std::string &loop_var = "");

/** The work of one register-communication sharing of \p bytes (BroadcastDma.h,
 * Sharing::RegComm) as the generated helper sw_regcomm_share does it, in cycles
 * (region_cycles of each of its straight-line parts: the set-up; per floatv4 the aligned load
 * (CPE (0, 0)) or store (the receivers) and the increment, address and compare-and-branch of
 * its loop; for a byte count that is not a multiple of 16 the last bytes copied through a
 * 16-byte local, a byte load and store each, and its unaligned vector load or store) and in
 * LDM accesses. The same on every CPE: the roles differ only in their puts and gets (CPE (0,
 * 0) two puts per vector, the rest of row 0 a get and a put, the other rows a get), which are
 * not counted here: the emulator times each as it runs (Machine::regcomm put_cycles /
 * get_cycles, one P1 issue each, plus the wait for the value), like the DMA intrinsics. */
struct ShareWork {
    int64_t cycles = 0, ldm_accesses = 0;
    int64_t unpaired_cycles = 0; ///< the same parts by region_unpaired_cycles
};
ShareWork regcomm_share_work(int64_t bytes, const Machine &m);
/** The same sharing on the SW26010-Pro, by RMA (the generated helpers sw_rma_share /
 * sw_rma_row / sw_rma_column): the role test, the reset of the arrival word, the issue and the
 * waits' tests, in cycles; the barrier, the RMA and the waits themselves are timed by the
 * emulator. */
ShareWork rma_share_work(const Machine &m);

} // namespace sw

#endif
