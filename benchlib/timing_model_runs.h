/** \file
 * The DMA measurements of the timing-model tests, run on the emulator with the hand-written
 * kernels of timing_model_kernels.c / timing_model_dma_kernels.c: shared by
 * tests/timing_model_test.cpp and the calibration benchmark apps/bench/model_calibration.cpp,
 * so that both report the same runs. Each spawns one kernel on the current machine (call
 * athread_init first) and returns the figure with that kernel's record.
 */
#ifndef SW_BENCHLIB_TIMING_MODEL_RUNS_H
#define SW_BENCHLIB_TIMING_MODEL_RUNS_H

#include <athread_emu.h>

#include <cstddef>
#include <vector>

namespace tm_runs {

/** 128-byte aligned, zeroed memory, freed at scope end. */
struct Mem {
    explicit Mem(size_t n);
    ~Mem();
    Mem(const Mem &) = delete;
    Mem &operator=(const Mem &) = delete;
    char *p;
};

/** A run's figure (GB/s by the run's own accounting) and its kernel record. */
struct Run {
    double gbps;
    const athread_emu_kernel_stats *stats;
};

/** CAND's STREAM copy (2 arrays) or triad (3): `bytes` per request and iteration on
 *  `active` CPEs, each request waited for, arrays 10 doubles after a 128-byte boundary (b = 1,
 *  c = 2, scalar 3); `iters` 0 picks 8..1024 by size. STREAM GB/s. *first_a, if given, gets
 *  the first value the last active CPE wrote. */
Run stream(int bytes, bool triad, int active = 64, int iters = 0, bool account = true,
           double *first_a = nullptr);

/** CAND's strided copy: 24 KB per descriptor in blocks of bsize bytes with gaps of gap
 *  bytes, 4 iterations, 64 CPEs. GB/s of copied bytes (read + written). */
Run strided(int bsize, int gap);

/** CAND's measured range of that copy by block size (SW26010.md "Strided DMA": 24 KB per
 *  descriptor, hardly depending on the gap), GB/s. */
struct StridedRange {
    int bsize;
    double lo, hi;
};
inline const std::vector<StridedRange> &cand_strided_ranges() {
    static const std::vector<StridedRange> ranges = {{64, 2.7, 3.3},
                                                     {256, 7.9, 9.2},
                                                     {1024, 14.4, 15.8},
                                                     {4096, 17.3, 18.9},
                                                     {8192, 19.3, 19.7}};
    return ranges;
}

/** Gets (or puts) only, each waited: `bytes` per request in blocks of bsize (0: contiguous)
 *  with gaps of gap bytes, `iters` per CPE, all CPEs the same addresses when same_addr. GB/s
 *  of requested bytes over the modelled time (spawn and join included). */
Run dma_only(int bytes, int bsize, int gap, int iters, bool same_addr, bool put = false,
             int active = 64);

/** The model's read plateau: 64 CPEs x 256 blocking contiguous 4 KB gets each (distinct,
 *  128-byte aligned addresses: bytes = line bytes), GB/s of requested bytes over the modelled
 *  time, spawn and join included (model_calibration's read_only_gbps). */
Run read_plateau();

} // namespace tm_runs

#endif
