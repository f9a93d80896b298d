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
    double copy_gbps;   ///< 1e9 B/s, STREAM accounting
    double triad_gbps;
};

struct Machine {
    std::string name;
    int core_groups_per_chip;
    int cpes_per_core_group;
    int cpe_mesh_rows;          ///< id >> 3 is the row on SW26010 [V] WX, DOC
    int cpe_mesh_cols;
    int64_t ldm_bytes;          ///< scratchpad per CPE
    int64_t ldm_stack_reserve;  ///< part of the LDM kept for the CPE stack; never given to buffers
    int64_t dma_line_bytes;     ///< main memory moves in lines of this size [V] DMAM
    int64_t ldm_alignment;      ///< alignment of LDM buffers in generated code [V] DOC
    double clock_ghz;
    double flops_per_cycle_per_cpe;  ///< fp32 and fp64 taken equal [U] (see SW26010.md)
    int simd_float_lanes;
    double dma_theoretical_gbps;     ///< per core group
    std::vector<DmaPoint> dma_curve; ///< measured, one CG, all CPEs active

    /** Bytes of LDM a CPE may give to data buffers (ldm_malloc and __thread_local). */
    int64_t ldm_data_budget() const { return ldm_bytes - ldm_stack_reserve; }
    /** Peak of one core group's CPEs in GFLOPS. */
    double cg_peak_gflops() const {
        return clock_ghz * flops_per_cycle_per_cpe * cpes_per_core_group;
    }
};

/** SW26010 (Sunway TaihuLight), one core group. */
inline const Machine &sw26010() {
    static const Machine m = {
        "sw26010",
        4,       // CGs per chip [V] WP, DG
        64,      // CPEs per CG [V] WP, DG
        8, 8,    // 8x8 mesh [V] WP, DG
        64 * 1024,  // 64 KB LDM per CPE [V] WP, DG
        // Stack reserve [U]: real kernels use 55-60 KB for data (swDNN 55,296-57,344 B;
        // NSCC-Wuxi demos cap buffers at 56 KB), so 8 KB are kept for the stack.
        8 * 1024,
        128,     // DMA line [V] DMAM
        128,     // LDM arrays aligned(128) in real code [V] DOC
        1.45,    // GHz [V] WP
        8.0,     // 4-lane FMA = 8 flop/cycle per CPE [V] WP; fp32 = fp64 [U]
        4,       // floatv4 [V] STN, DOC
        34.1,    // 136.51 GB/s per chip / 4 CGs [V] GK, [D]
        {
            // [V] CAND memory/stream_sw/PE/PE_CONT; same as shared/sunway/dma_bandwidth.csv
            {8, 0.47, 0.56},      {16, 0.94, 0.99},     {32, 1.33, 1.66},
            {64, 1.86, 2.37},     {128, 2.95, 4.01},    {256, 5.99, 8.28},
            {512, 8.78, 11.7},    {1024, 12.5, 14.8},   {2048, 15.3, 18.0},
            {4096, 18.4, 20.3},   {8192, 19.1, 21.3},   {16384, 20.0, 22.1},
            {24576, 20.4, 22.3},
        },
    };
    return m;
}

/** SW26010-Pro (new-generation Sunway), one core group. */
inline const Machine &sw26010_pro() {
    static const Machine m = {
        "sw26010-pro",
        6,       // CGs per chip [V] WP, TH, RJXB
        64,      // CPEs per CG [V] WP
        8, 8,
        256 * 1024,  // CRTS_MAX_LDM_SIZE [V] CRTS
        // [U] part of the 256 KB may be configured as data cache (default 32 KB) [V] AKH;
        // we keep 32 KB away from buffers for the cache and the stack.
        32 * 1024,
        128,     // [U] line size not published for the Pro; SW26010's taken
        128,
        2.25,    // GHz [V] SRT, TH
        16.0,    // 2.3 TFLOPS fp64 per CG / 64 CPEs / 2.25 GHz [D]; fp32 equal [U]
        8,       // floatv8 [V] SRT
        51.2,    // DDR4 per CG [V] WP
        {
            // [U] OPS measurements, only these points published; copy = triad assumed
            {16, 3.4, 3.4}, {256, 17.6, 17.6}, {1024, 23.5, 23.5}, {4096, 26.0, 26.0},
        },
    };
    return m;
}

/** The machine of that name ("sw26010" or "sw26010-pro"), or nullptr. */
inline const Machine *machine_by_name(const std::string &name) {
    if (name == sw26010().name) return &sw26010();
    if (name == sw26010_pro().name) return &sw26010_pro();
    return nullptr;
}

}  // namespace sw

#endif
