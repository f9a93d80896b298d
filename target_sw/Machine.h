/** \file
 * The machine description: every limit and speed of a Sunway core group that the
 * passes, the emulator, the timing model and the autoscheduler read. Nothing else in
 * the project may hold these numbers as literals.
 *
 * Sources (keys as in shared/sunway/SW26010.md):
 *   WP   en.wikipedia.org/wiki/Sunway_SW26010
 *   DG   Dongarra, "Report on the Sunway TaihuLight System", UT-EECS-16-742
 *   GK   grokipedia.com/page/Sunway_SW26010
 *   CAND Lin et al., Parallel Computing 77 (2018); jameslinsjtu/swCandle measurements
 *   DOC  dxhisboy/shenwei-doc (athread / DMA manual translation)
 *   DMAM Xu-Kai/SWMapper dma_macros.h (128-byte DMA line accounting)
 *   swDNN Fang et al., IPDPS 2017, and its run logs (55,296-57,344 B of LDM data)
 *   WX   nsccwxtech/cpc demos (56 KB buffer cap)
 *   CRTS new-toolchain crts.h (CRTS_MAX_LDM_SIZE), OPS SYSU-SCC/swops
 * Tags: [V] seen in the source, [D] derived from sourced numbers, [U] uncertain.
 */
#ifndef SW_MACHINE_H
#define SW_MACHINE_H

#include <cstdint>
#include <string>
#include <vector>

namespace sw {

/** One measured point of the DMA bandwidth curve of a whole core group. */
struct DmaPoint {
    int64_t bytes_per_request;
    double copy_gbps; ///< 1e9 B/s, STREAM accounting
    double triad_gbps;
};

/** Parameters of the emulator's timing model of DMA and kernel launch
 *  (target_sw/emulator/src/timing.cpp). A request of a CPE goes through three stages:
 *  setup (get_block_cycles or put_block_cycles per contiguous main-memory block; one
 *  request at a time per CPE),
 *  data (its 128-byte-line bytes through a channel shared by every CPE moving data at that
 *  moment: processor sharing, the channel time of a line byte is 1/get_bytes_per_cycle or
 *  1/put_bytes_per_cycle, and one CPE moves at most cpe_cap_bytes_per_cycle; one request at
 *  a time per CPE), then a fixed latency (pipelined: the next request's setup and data may
 *  start meanwhile). Cycles are CPE cycles at clock_ghz. */
struct DmaTiming {
    double get_latency_cycles;
    double put_latency_cycles;
    double get_block_cycles;        ///< per contiguous main-memory block of a get
    double put_block_cycles;        ///< per contiguous main-memory block of a put
    double get_bytes_per_cycle;     ///< whole CG, line bytes, when only gets move
    double put_bytes_per_cycle;     ///< whole CG, line bytes, when only puts move
    double cpe_cap_bytes_per_cycle; ///< most line bytes one CPE moves per cycle
    /** Highest get (read) rate of a whole CG, GB/s of line bytes, that measurements
     *  support: get_bytes_per_cycle * clock_ghz must not exceed it (the fit's wall, checked
     *  by tests/timing_model_test.cpp). Not the DRAM's theoretical rate. */
    double get_cap_gbps;
    double spawn_cycles; ///< athread_spawn until the CPEs start
    double join_cycles;  ///< last CPE done until athread_join returns
};

/** Register communication between CPEs of a row or column (simd_putr / simd_putc /
 *  simd_getr / simd_getc; the emulator's model: target_sw/emulator/README.md). The defaults
 *  are SW26010's. */
struct RegComm {
    /** The CPE mesh has row/column register communication. [V] DOC (dxhisboy/shenwei-doc
     *  data-en.yaml: putr/putc/getr/getc), STN simd.h (SW5 only). SW26010-Pro: no, it has
     *  RMA instead [V] WP, CRTS. */
    bool available = true;
    /** Values a CPE's row (and, separately, column) receive buffer holds; a put to a full
     *  buffer stalls [V] DOC ("pauses when a target is full"). The depth is [U]: not found
     *  in public sources (swCandle RLC/row/test_rlc_noperf_entry_depth measures it but
     *  publishes no result). */
    int buffer_entries = 4;
    /** A put or a get is one instruction of the P1 pipeline [V] SW26010.md (CAND summary:
     *  register communication issues on P1); its issue cost in cycles. */
    double put_cycles = 1;
    double get_cycles = 1;
    /** Cycles from a put until the value can be read by the receiver's get [U]: cycle
     *  figures not found; ~10 is often quoted (SW26010.md); broadcast taken as
     *  point-to-point (same latency [V] CAND summary). */
    double latency_cycles = 10;
};

/** Remote LDM access between the CPEs of a core group (SW26010-Pro: CRTS_rma_iget / iput /
 *  row and column broadcasts; the emulator's model: target_sw/emulator/README.md). No RMA
 *  latency or bandwidth of the Pro is published (shared/sunway/SW26010-Pro.md, "Measured
 *  performance"): every value is [U], an order of magnitude kept apart so that a measurement
 *  can replace it. A broadcast costs what a point-to-point transfer of its bytes costs. */
struct Rma {
    bool available = false;      ///< SW26010: no (register communication instead) [V] WP
    double issue_cycles = 10;    ///< the issuer's cost of starting one request [U]
    double latency_cycles = 60;  ///< issue until the first bytes land [U]
    double bytes_per_cycle = 32; ///< one 512-bit vector per cycle through the mesh [U]
};

/** Communication between core groups (one MPI rank each, dist/): within a chip and between
 * nodes. Used by the model of a multi-rank job's communication (dist/JobModel.h); the values
 * and their sources are set per machine below. */
struct Interconnect {
    double cg_latency_us = 0;   ///< MPI message between two core groups of one chip
    double cg_gbps = 0;         ///< MPI bandwidth between two core groups of one chip
    double node_latency_us = 0; ///< MPI message between two nodes
    double node_gbps = 0;       ///< MPI bandwidth between two nodes, one direction
    int nodes_per_supernode = 0;
};

struct Machine {
    std::string name;
    int core_groups_per_chip;
    int cpes_per_core_group;
    int cpe_mesh_rows; ///< id >> 3 is the row on SW26010 [V] WX, DOC
    int cpe_mesh_cols;
    int64_t ldm_bytes;         ///< scratchpad per CPE
    int64_t ldm_stack_reserve; ///< part of the LDM kept for the CPE stack; never given to buffers
    int64_t dma_line_bytes;    ///< main memory moves in lines of this size [V] DMAM
    int64_t ldm_alignment;     ///< alignment of LDM buffers in generated code [V] DOC
    double clock_ghz;
    double mpe_clock_ghz;           ///< the MPE's cycle counter (host-side timers)
    double flops_per_cycle_per_cpe; ///< fp32 and fp64 taken equal [U] (see SW26010.md)
    int simd_float_lanes;
    double dma_theoretical_gbps;     ///< per core group
    std::vector<DmaPoint> dma_curve; ///< measured, one CG, all CPEs active

    // CPE compute costs read by the work counting of generated code (WorkCount.h). All [U]:
    // SW26010.md says divide, sqrt and exp are slow (not fully pipelined) and that direct
    // main-memory loads/stores from a CPE are slow, but gives no cycle counts; these are
    // order-of-magnitude values, named here so that they can be replaced by measurements.
    /** The code generator has the even/odd de-interleave of two float vectors (SW26010: vshff
     *  [V] DOC; SW26010-Pro: its simd_vshfs takes an intv16 control whose encoding is not
     *  published [U], so not generated): strided windows may be split into phases
     *  (SplitPhases.h). */
    bool even_odd_shuffle = true;
    /** The CPE runtime is CRTS (SW26010-Pro): the CRTS DMA / RMA API exists, athread_halt is a
     *  no-op [V] SW26010-Pro.md. */
    bool crts_runtime = false;

    int64_t div_cycles = 30;            ///< extra cycles of a float divide [U]
    int64_t sqrt_cycles = 30;           ///< extra cycles of a float sqrt [U]
    int64_t transcendental_cycles = 80; ///< extra cycles of exp/log/pow (software) [U]
    int64_t direct_access_cycles = 250; ///< extra cycles of a direct main-memory access [U]

    // CPE pipeline facts (shared/sunway/SW26010.md, "CPE pipeline facts").
    /** Cycles from a floating-point instruction's issue until a dependent one may issue.
     *  [V] as a floor: sw5cc's own output spaces dependent vector FP instructions 4 cycles
     *  apart (swCandle soft_div slave.s, swDNN core_functions.S); 7 is quoted too, unverified
     *  [U]. A region takes at least its longest dependent FP chain times this (WorkCount.h). */
    int64_t fp_latency_cycles = 4;
    /** P1 instructions of an unaligned vector load or store: simd_loadu = vlds_ul + vlds_uh,
     *  simd_storeu = vsts_ul + vsts_uh [V] DOC. (Aligned simd_load/simd_store: one.) */
    int64_t unaligned_vector_access_p1 = 2;
    /** P1 instructions of a splat printed as simd_set_floatv4(x, x, x, x): the real simd.h
     *  defines it through a union in memory, four scalar stores and one vector load [D] STN
     *  simd.h; whether sw5cc keeps the union in registers is not known [U]. (simd_loade, one
     *  ldse, would cost one [V] DOC.) */
    int64_t splat_p1 = 5;
    /** P1 instructions of building a vector from scalars (simd_set_floatv4 / _floatv8: one
     *  store per lane into a union and one vector load [D] STN simd.h, the Pro SDK's simd.h);
     *  a gathered (strided) vector costs its scalar loads plus this. */
    int64_t vector_set_p1 = 5;
    /** A splat of a value in the LDM is one load that broadcasts it (simd_loade, ldse [V] DOC).
     *  SW26010-Pro: simd_loade is MPE-only [V] SW26010-Pro.md, so a scalar load and a splat. */
    bool broadcast_load = true;
    /** Vector registers of a CPE [V] SW26010.md; register blocks must leave room for the
     *  operands (PromoteAccumulators). */
    int vector_registers = 32;
    /** Vector registers kept free of promoted accumulators for the loaded operands, splats and
     *  addresses of the loop that updates them [U] (no published register allocation). */
    int operand_registers = 8;

    DmaTiming dma_timing{};      ///< DMA and launch timing of the emulator's model (set below)
    RegComm regcomm{};           ///< register communication
    Rma rma{};                   ///< remote LDM access (SW26010-Pro)
    Interconnect interconnect{}; ///< between core groups and nodes (set below)

    /** Bytes of LDM a CPE may give to data buffers (ldm_malloc and __thread_local). */
    int64_t ldm_data_budget() const { return ldm_bytes - ldm_stack_reserve; }
    /** Peak of one core group's CPEs in GFLOPS. */
    /** The chip's name as its documents write it, for reports: "SW26010" or "SW26010-Pro". */
    std::string title() const { return name == "sw26010-pro" ? "SW26010-Pro" : "SW26010"; }
    double cg_peak_gflops() const {
        return clock_ghz * flops_per_cycle_per_cpe * cpes_per_core_group;
    }
    /** The DMA timing model's plateau of a whole core group when only gets (reads of main
     *  memory) move, GB/s of line bytes: get_bytes_per_cycle at clock_ghz (SW26010: 28.5). */
    double dma_get_plateau_gbps() const { return dma_timing.get_bytes_per_cycle * clock_ghz; }
    /** The same when only puts (writes to main memory) move (SW26010: 19.7). */
    double dma_put_plateau_gbps() const { return dma_timing.put_bytes_per_cycle * clock_ghz; }
};

/** SW26010 (Sunway TaihuLight), one core group. */
inline const Machine &sw26010() {
    static const Machine mm = [] {
        Machine m = {
            "sw26010",
            4,  // CGs per chip [V] WP, DG
            64, // CPEs per CG [V] WP, DG
            8,
            8,         // 8x8 mesh [V] WP, DG
            64 * 1024, // 64 KB LDM per CPE [V] WP, DG
            // Stack reserve [U]: real kernels use 55-60 KB for data (swDNN 55,296-57,344 B;
            // NSCC-Wuxi demos cap buffers at 56 KB), so 8 KB are kept for the stack.
            8 * 1024,
            128,  // DMA line [V] DMAM
            128,  // LDM arrays aligned(128) in real code [V] DOC
            1.45, // GHz [V] WP
            1.45, // MPE as the CPEs [V] WP
            8.0,  // 4-lane FMA = 8 flop/cycle per CPE [V] WP; fp32 = fp64 [U]
            4,    // floatv4 [V] STN, DOC
            34.1, // 136.51 GB/s per chip / 4 CGs [V] GK, [D]
            {
                // [V] CAND memory/stream_sw/PE/PE_CONT; same as shared/sunway/dma_bandwidth.csv
                {8, 0.47, 0.56},
                {16, 0.94, 0.99},
                {32, 1.33, 1.66},
                {64, 1.86, 2.37},
                {128, 2.95, 4.01},
                {256, 5.99, 8.28},
                {512, 8.78, 11.7},
                {1024, 12.5, 14.8},
                {2048, 15.3, 18.0},
                {4096, 18.4, 20.3},
                {8192, 19.1, 21.3},
                {16384, 20.0, 22.1},
                {24576, 20.4, 22.3},
            },
        };
        // DMA timing [D], a minimax fit by tools/fit_dma_model.py (re-run it after changing the
        // data) to: CAND's copy/triad curve from 128 B (shared/sunway/dma_bandwidth.csv), the
        // strided ranges of SW26010.md and swDNN's reads-only test (swCNNv12 run.log: 20
        // blocking strided gets per CPE per spawn; per shape 2 KB in 128 B blocks 20.9-22.1 GB/s,
        // 5 KB in 128 B blocks 21.3-24.3, 4 KB in 256 B blocks 26.0), with gets no faster than
        // get_cap_gbps. Errors of these values: copy/triad from 128 B -10.3%..+10.2% (outside 10%:
        // copy 128 B +10.2%, triad 256 B -10.3%, copy 8 KB +10.2%), strided ranges within 9.3%,
        // swDNN 2 KB -5.4%, 5 KB inside, 4 KB/256 B -10.2% (one run); 64 CPEs reading 4 KB
        // blocks get 26.6 GB/s. Not within 10% everywhere because CAND's time per request falls
        // from 128 B to 256 B (copy 8,050 -> 7,930 cycles, triad 8,885 -> 8,610) while the model
        // must move 128 more line bytes per request through channels no faster than the caps;
        // with reads at DDR3's 34.1 GB/s the same fit reaches 9.6%. Below 128 B the model is
        // 0-50% slow (sub-line requests cost less than their line bytes say).
        // [D] Gets and puts differ: swDNN's strided gets of 128 B blocks reach 21-24 GB/s, so a get
        // block costs little; CAND's strided copies (get + put of the same blocks) are slow, so the
        // per-block cost is the put's (partial-line writes [U]). Latencies: swDNN fixes the get's,
        // CAND the sum; the split is [D][U].
        m.dma_timing.get_latency_cycles = 825;  // [D][U] fit (0.57 us)
        m.dma_timing.put_latency_cycles = 2621; // [D][U] fit (1.81 us)
        m.dma_timing.get_block_cycles = 78;     // [D] fit, from swDNN's strided gets
        m.dma_timing.put_block_cycles = 1715;   // [D] fit, from CAND's strided copies
        m.dma_timing.get_bytes_per_cycle =
            19.65; // [D] fit (28.49 GB/s of line bytes), at get_cap_gbps
        m.dma_timing.put_bytes_per_cycle = 13.56; // [D] fit (19.66 GB/s of line bytes)
        // [D] No measurement supports faster reads: decomposing CAND's 4-24 KB copy/triad plateau
        // (copy = get + put, triad = 2 gets + put) gives gets of 26.6-28.5 GB/s, swDNN's best
        // reads-only run is 26.0 GB/s [V]; DDR3's theoretical 34.1 GB/s is never reached.
        m.dma_timing.get_cap_gbps = 28.5;
        // [U] no single-CPE measurement found: one CPE is taken to reach at most ~1/4 of the
        // theoretical CG bandwidth (8.5 GB/s), so 3+ CPEs already saturate the channel.
        m.dma_timing.cpe_cap_bytes_per_cycle = 5.9;
        // [U] launch/join overheads not measured in the sources: ~10 us spawn, ~2 us join.
        m.dma_timing.spawn_cycles = 14500;
        m.dma_timing.join_cycles = 2900;
        // Communication between ranks (one per core group; `bsub -n P -np 4 -cgsp 64` puts four on
        // a node [V] from public job scripts). No MPI latency or bandwidth measured on TaihuLight
        // was found, between the core groups of a chip or between nodes, so every figure below is
        // [U]: order-of-magnitude values kept inside the published peaks.
        // Between core groups: only "4 CGs connected by a NoC" is published [V] (Dongarra's report,
        // UT-EECS-16-742, fig. 2); Sunway MPI is MVAPICH2-based, which uses shared memory within
        // a node [U]; each CG's memory reads at 20-22 GB/s by DMA [V] (CAND, above).
        m.interconnect.cg_latency_us = 1.0; // [U]
        m.interconnect.cg_gbps = 4.0;       // [U], kept well below the CGs' memory bandwidth
        // Between nodes: 16 GB/s injection per node [V] vendor peak (Fu et al., Sci. China Inf.
        // Sci. 59:072001, 2016, as cited by secondary sources; one or both directions not
        // confirmed); 6 GB/s per direction [U] (about 75% of 8); latency ~1 us is quoted for the
        // network, unconfirmed: 1.5 us within a supernode [U] (inter-supernode traffic, 2.5 us
        // [U], is not separated: a job of up to 256 nodes stays in one supernode).
        m.interconnect.node_latency_us = 1.5;     // [U]
        m.interconnect.node_gbps = 6.0;           // [U]
        m.interconnect.nodes_per_supernode = 256; // 32 boards x 8 nodes [V] (Dongarra's report)
        return m;
    }();
    return mm;
}

/** SW26010-Pro (new-generation Sunway), one core group. */
inline const Machine &sw26010_pro() {
    static const Machine mm = [] {
        Machine m = {
            "sw26010-pro",
            6,  // CGs per chip [V] WP, TH, RJXB
            64, // CPEs per CG [V] WP
            8,
            8,
            256 * 1024, // CRTS_MAX_LDM_SIZE [V] CRTS
            // [U] part of the 256 KB may be configured as data cache (default 32 KB) [V] AKH;
            // we keep 32 KB away from buffers for the cache and the stack.
            32 * 1024,
            128,  // [U] line size not published for the Pro; SW26010's taken
            64,   // LDM buffers aligned(64), -faddress_align=64 [V] SW26010-Pro.md (Build)
            2.25, // GHz [V] SRT, TH
            2.1,  // MPE; its rtc counter ticks at 2.1 GHz [V] SW26010-Pro.md
            16.0, // 2.3 TFLOPS fp64 per CG / 64 CPEs / 2.25 GHz [D]; fp32 equal [U]
            8,    // floatv8 [V] SRT
            51.2, // DDR4 per CG [V] WP
            {
                // [U] OPS measurements, only these points published; copy = triad assumed
                {16, 3.4, 3.4},
                {256, 17.6, 17.6},
                {1024, 23.5, 23.5},
                {4096, 26.0, 26.0},
            },
        };
        // DMA timing [D] fitted by tools/fit_dma_model.py to the four OPS points of SW26010.md
        // (16 B..4 KB, copy = triad assumed; errors -1.4%, +1.3%, +1.1%, -0.4%; run on the emulator
        // by tests/timing_model_test.cpp, spawn and join included: -3.2%, +0.7%, +0.9%, -0.6%). Few
        // points [U]: they show no fixed cost per request (the best fixed cost is 0), likely
        // because OPS keeps many requests in flight; one bandwidth and one (zero) block cost for
        // get and put.
        m.dma_timing.get_latency_cycles = 0;      // [D][U] OPS fit
        m.dma_timing.put_latency_cycles = 0;      // [D][U] OPS fit
        m.dma_timing.get_block_cycles = 0;        // [D][U] OPS fit (no strided data for the Pro)
        m.dma_timing.put_block_cycles = 0;        // [D][U] OPS fit (no strided data for the Pro)
        m.dma_timing.get_bytes_per_cycle = 11.94; // [D] OPS fit (26.9 GB/s of line bytes)
        m.dma_timing.put_bytes_per_cycle = 11.94; // [D][U] same as get
        // [U] no reads-only measurement for the Pro: the cap is DDR4's 51.2 GB/s [V] WP; the fitted
        // rate stays far below it.
        m.dma_timing.get_cap_gbps = 51.2;
        m.dma_timing.cpe_cap_bytes_per_cycle =
            51.2 / 4 / 2.25;               // [U] 1/4 of the DDR4 peak, as SW26010
        m.dma_timing.spawn_cycles = 22500; // [U] 10 us, as SW26010
        m.dma_timing.join_cycles = 4500;   // [U] 2 us, as SW26010
        m.regcomm.available = false;       // RMA instead of register communication [V] WP, CRTS
        m.rma.available = true;            // CRTS_rma_* [V] CRTS; its costs are [U] (struct Rma)
        m.crts_runtime = true;             // [V] CRTS
        // Communication between ranks (one per core group, six per chip): nothing measured on the
        // new Sunway was found either; SW26010's [U] values are taken as they are [U].
        m.interconnect = sw26010().interconnect;
        m.even_odd_shuffle = false; // [U] simd_vshfs's control encoding unpublished
        m.broadcast_load = false;   // simd_loade is MPE-only on the Pro [V]
        // A splat is simd_vcpyfs, one instruction [V] SW26010-Pro.md (its pipeline [U]); a vector
        // built from scalars is 8 stores and a load (simd_set_floatv8 through a union) [D].
        m.splat_p1 = 1;
        m.vector_set_p1 = 9;
        return m;
    }();
    return mm;
}

/** The machine of that name ("sw26010" or "sw26010-pro"), or nullptr. */
inline const Machine *machine_by_name(const std::string &name) {
    if (name == sw26010().name)
        return &sw26010();
    if (name == sw26010_pro().name)
        return &sw26010_pro();
    return nullptr;
}

} // namespace sw

#endif
