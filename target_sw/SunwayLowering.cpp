/** \file
 * The Sunway lowering, step by step.
 */
#include "target_sw/SunwayLowering.h"

#include "target_sw/AlignVectorAccesses.h"
#include "target_sw/BroadcastDma.h"
#include "target_sw/DeferTileGets.h"
#include "target_sw/DelayDmaWaits.h"
#include "target_sw/DoubleBuffer.h"
#include "target_sw/Errors.h"
#include "target_sw/FindCpeKernels.h"
#include "target_sw/HoistPaddingFill.h"
#include "target_sw/InjectDma.h"
#include "target_sw/PipelineRoundPuts.h"
#include "target_sw/PipelineTilePuts.h"
#include "target_sw/PlaceLdmBuffers.h"
#include "target_sw/PromoteAccumulators.h"
#include "target_sw/ShareOperands.h"
#include "target_sw/SplitPhases.h"
#include "target_sw/StageOutput.h"

#include <sstream>

namespace sw {

using namespace Halide;
using namespace Halide::Internal;

namespace {

void log_step(std::ostream *log, const std::string &step, const SwFunction &f) {
    if (!log)
        return;
    *log << "\n// ===== after " << step << " =====\n";
    *log << "// host function " << f.name << "\n" << f.host_body << "\n";
    for (const CpeKernel &k : f.kernels) {
        *log << "// CPE kernel " << k.name << ", blocks:";
        for (const BlockLoop &b : k.blocks)
            *log << " " << b.var << " in [" << b.min << ", +" << b.extent << ")";
        *log << "\n" << k.body << "\n";
    }
}

} // namespace

Target halide_target_for_sunway() {
    // Asserts stay on: they become the host function's argument checks.
    return Target("x86-64-linux-no_bounds_query-no_runtime");
}

SwFunction lower_to_sunway(const LoweredFunc &fn, const Machine &m, const Directives &d,
                           std::ostream *ir_log) {
    SwFunction f;
    f.name = fn.name;
    f.args = fn.args;
    f.machine = &m;
    if (ir_log)
        *ir_log << "// ===== Halide 14 lowered " << fn.name << " =====\n" << fn.body << "\n";

    find_cpe_kernels(fn.body, f);
    log_step(ir_log, "find_cpe_kernels", f);

    // Marked outputs computed into an LDM tile and copied back (turned into DMA puts below).
    if (!d.staged_outputs.empty()) {
        for (CpeKernel &k : f.kernels)
            stage_outputs(k, d.staged_outputs);
        log_step(ir_log, "stage_outputs", f);
    }

    // Marked stagings read by strided vectors also kept split into their phases.
    if (!d.phase_split.empty()) {
        for (CpeKernel &k : f.kernels)
            apply_split_phases(k, d.phase_split);
        log_step(ir_log, "apply_split_phases", f);
    }

    for (CpeKernel &k : f.kernels)
        place_ldm_buffers(k, m);
    if (ir_log) {
        for (const CpeKernel &k : f.kernels) {
            *ir_log << "\n// ===== after place_ldm_buffers: " << k.name << " =====\n";
            for (const LdmBuffer &b : k.ldm)
                *ir_log << "// LDM " << b.name << ": " << b.bytes << " bytes\n";
            *ir_log << "// peak " << k.ldm_peak_bytes << " of " << m.ldm_data_budget()
                    << " bytes\n";
        }
    }

    // Windows shared by broadcast DMA: their rows placed by DMA, issued once for the core
    // group by up to eight CPEs, instead of spread by every CPE (InjectDma.h). One shared by
    // register communication is fetched by one CPE per row, column or core group, whose
    // engine sets up every row's request: placed only where the schedule says so
    // (sw::place_rows, where the autoscheduler finds the requests cheaper than every CPE's
    // spread); else it comes compactly, spread after the sharing.
    std::set<std::string> rows_in_place = d.rows_placed;
    for (const auto &[name, how] : d.shared) {
        if (how == Sharing::Dma) // (not DmaRow: the autoscheduler prices a mesh window compact)
            rows_in_place.insert(name);
    }
    for (CpeKernel &k : f.kernels)
        inject_dma(k, m.simd_float_lanes, rows_in_place);
    log_step(ir_log, "inject_dma", f);

    for (CpeKernel &k : f.kernels)
        apply_double_buffering(k, m, d.double_buffered);
    log_step(ir_log, "apply_double_buffering", f);

    // Marked stagings every CPE needs: one BCAST_MODE get by CPE 0 between two barriers.
    if (!d.shared.empty()) {
        for (CpeKernel &k : f.kernels)
            apply_broadcast(k, m, d);
        log_step(ir_log, "apply_broadcast", f);
    }

    for (CpeKernel &k : f.kernels)
        delay_dma_waits(k);
    log_step(ir_log, "delay_dma_waits", f);

    // A tile's get needed only after a double-buffered loop: issued after its last prefetch.
    for (CpeKernel &k : f.kernels)
        defer_tile_gets(k);
    log_step(ir_log, "defer_tile_gets", f);

    // Pixel tiles in turn: each tile's put in pieces over the next tile's chunks.
    for (CpeKernel &k : f.kernels)
        pipeline_tile_puts(k, m);
    log_step(ir_log, "pipeline_tile_puts", f);

    for (CpeKernel &k : f.kernels)
        promote_accumulators(k, *f.machine);
    log_step(ir_log, "promote_accumulators", f);

    for (CpeKernel &k : f.kernels)
        share_operands(k);
    log_step(ir_log, "share_operands", f);

    // A padded window's padding written once per LDM slot, not after every chunk's transfer.
    for (CpeKernel &k : f.kernels)
        hoist_padding_fill(k);
    log_step(ir_log, "hoist_padding_fill", f);

    for (CpeKernel &k : f.kernels)
        align_vector_accesses(k);
    log_step(ir_log, "align_vector_accesses", f);

    // Last: kernels with a broadcast run the same number of block rounds on every CPE.
    if (!d.shared.empty()) {
        for (CpeKernel &k : f.kernels)
            make_block_loop_uniform(k);
        log_step(ir_log, "make_block_loop_uniform", f);
    }

    // A CPE's rounds of blocks in turn: each block's put in pieces over the next block's chunks.
    // (Its slots' accesses proved aligned again: the rewrite leaves them unknown.)
    for (CpeKernel &k : f.kernels) {
        pipeline_round_puts(k, m);
        if (k.rounds_in_body)
            align_vector_accesses(k);
    }
    log_step(ir_log, "pipeline_round_puts", f);
    return f;
}

SwFunction lower_pipeline_to_sunway(Pipeline p, const std::vector<Argument> &args,
                                    const std::string &name, const Machine &m, const Directives &d,
                                    std::ostream *ir_log) {
    Module module = p.compile_to_module(args, name, halide_target_for_sunway());
    for (const LoweredFunc &fn : module.functions()) {
        if (fn.name == name)
            return lower_to_sunway(fn, m, d, ir_log);
    }
    throw UserError("the compiled pipeline has no function " + name);
}

SwFunction lower_pipeline_to_sunway(Pipeline p, const std::vector<Argument> &args,
                                    const std::string &name, const Machine &m,
                                    std::ostream *ir_log) {
    const Directives d = directives_of(p);
    return lower_pipeline_to_sunway(std::move(p), args, name, m, d, ir_log);
}

std::string describe(const SwFunction &f) {
    std::ostringstream s;
    s << f.name << " for " << f.machine->name << ": " << f.kernels.size() << " CPE kernel(s)\n";
    for (const CpeKernel &k : f.kernels) {
        Expr blocks = 1;
        for (const BlockLoop &b : k.blocks)
            blocks = blocks * b.extent;
        s << "kernel " << k.name << ": " << simplify(blocks) << " blocks over "
          << f.machine->cpes_per_core_group << " CPEs\n";
        s << "  LDM per CPE: " << k.ldm_peak_bytes << " of " << f.machine->ldm_data_budget()
          << " bytes at the peak (aligned to " << f.machine->ldm_alignment << ")\n";
        for (const LdmBuffer &b : k.ldm)
            s << "    " << b.name << ": " << b.bytes << " bytes\n";
        for (const DmaSite &d : k.dma) {
            s << "  DMA " << (d.is_put ? "put " : "get ") << d.ldm_buffer
              << (d.is_put ? " -> " : " <- ") << d.main_buffer << ": " << d.shape << "\n";
        }
        for (const std::string &b : k.direct_accesses) {
            s << "  direct main-memory access (slow, not staged in LDM): " << b << "\n";
        }
        for (const std::string &n : k.notes)
            s << "  note: " << n << "\n";
    }
    return s.str();
}

} // namespace sw
