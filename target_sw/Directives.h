/** \file
 * The Sunway schedule directives of a pipeline, as one value that the lowering is given.
 *
 * A schedule says, besides Halide's own directives, which Funcs the Sunway lowering should
 * double-buffer, stage through LDM on the way out, split into stride phases or share across
 * the CPEs of a core group:
 *
 *     sw::double_buffer(w.in());              // DoubleBuffer.h
 *     sw::stage_output(out);                  // StageOutput.h
 *     sw::split_phases(window);               // SplitPhases.h
 *     sw::broadcast(x.in(), Sharing::RegComm) // BroadcastDma.h
 *     sw::place_rows(window);                 // InjectDma.h
 *
 * Each call marks the Func itself, like any scheduling directive: the mark lives in the
 * Func's definition (as one of its trace tags, which Halide emits only when the Func is
 * traced, and tracing is not supported on the Sunway target), so it goes wherever the Func
 * goes: into a copy the autoscheduler tries a plan on, into the pipeline a generator
 * builds, and nowhere else. There is no registry: whoever compiles the pipeline reads the
 * marks with directives_of() and passes the Directives to lower_to_sunway
 * (SunwayLowering.h); the passes read only that value. Two pipelines lowered at once, in
 * one thread or several, share nothing.
 */
#ifndef SW_DIRECTIVES_H
#define SW_DIRECTIVES_H

#include "Halide.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace sw {

/** How the CPEs share a staging every one of them needs (sw::broadcast). */
enum class Sharing {
    Dma,     ///< one BCAST_MODE get by CPE 0 for the whole core group
    RegComm, ///< one get by CPE 0, passed on by register communication
    /** A staging the 8 CPEs of each mesh row need (its box depends on the block's row, not on
     * its column): one get by the row's CPE in column 0, passed along the row by register
     * communication. The A operand of a register-communication GEMM. */
    RegCommRow,
    /** A staging the 8 CPEs of each mesh column need: one get by the column's CPE in row 0,
     * passed down the column. The B operand of a register-communication GEMM. */
    RegCommColumn,
    /** A staging the 8 CPEs of each mesh row need, by broadcast DMA to that row: BCAST_MODE
     * gets with the row's bit as the mask, issued in pieces by the row's CPEs, between
     * barriers of the core group. The weights of a dense layer whose output columns are
     * spread over the mesh rows: read once, never passed on by the CPEs. */
    DmaRow
};

/** Whether \p how shares by broadcast DMA (to the whole core group or to each mesh row). */
inline bool by_dma(Sharing how) {
    return how == Sharing::Dma || how == Sharing::DmaRow;
}

/** Whether \p how shares by register communication (any of the three forms). */
inline bool by_regcomm(Sharing how) {
    return !by_dma(how);
}

/** "Sharing::Dma", "Sharing::RegComm", ..., as a schedule spells it. */
const char *sharing_name(Sharing how);

/** Every Sunway directive of a pipeline, by Func name. */
struct Directives {
    std::set<std::string> double_buffered; ///< sw::double_buffer
    std::set<std::string> staged_outputs;  ///< sw::stage_output
    std::set<std::string> phase_split;     ///< sw::split_phases
    std::map<std::string, Sharing> shared; ///< sw::broadcast, with its mode
    std::set<std::string> rows_placed;     ///< sw::place_rows

    bool empty() const {
        return double_buffered.empty() && staged_outputs.empty() && phase_split.empty() &&
               shared.empty() && rows_placed.empty();
    }
    bool operator==(const Directives &o) const {
        return double_buffered == o.double_buffered && staged_outputs == o.staged_outputs &&
               phase_split == o.phase_split && shared == o.shared && rows_placed == o.rows_placed;
    }
    bool operator!=(const Directives &o) const { return !(*this == o); }
};

/** The schedule-facing directives: each marks \p f (see the file comment). A later
 * broadcast of the same Func replaces the mode of an earlier one. */
void double_buffer(const Halide::Func &f);
void stage_output(const Halide::Func &f);
void split_phases(const Halide::Func &f);
void broadcast(const Halide::Func &f, Sharing how = Sharing::Dma);
/** A zero-padded window whose box rows are whole rows of its source: each row comes by a DMA
 * request of its own straight to its place in the padded layout, instead of the box in one
 * request, compactly, then spread in the LDM by every CPE (InjectDma.h). Windows shared by
 * broadcast DMA are always placed so; for one shared by register communication, its fetching
 * CPE then sets up a request per row and no CPE spreads it. */
void place_rows(const Halide::Func &f);

/** The directives marked on the Functions of \p env. */
Directives directives_of(const std::map<std::string, Halide::Internal::Function> &env);

/** The directives marked on \p outputs and every Func they call (wrappers included). */
Directives directives_of(const std::vector<Halide::Internal::Function> &outputs);

/** The directives marked on the Funcs of \p p. */
Directives directives_of(const Halide::Pipeline &p);

} // namespace sw

#endif
