/** \file
 * Argument structs of the hand-written CPE kernels of timing_model_kernels.c (C99 against
 * the emulator's slave.h + athread_emu.h) used by timing_model_runs.cpp,
 * tests/timing_model_test.cpp and the calibration benchmark (apps/bench/).
 */
#ifndef TIMING_MODEL_KERNELS_H
#define TIMING_MODEL_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/** stream_kernel: CAND's STREAM loop (memory/stream_sw/PE/PE_CONT). For k < iters, CPE id
 *  (if id < active) moves the chunk j = id + 64 k of `bytes` bytes: copy: get a[j] ->
 *  put c[j]; triad: get b[j], get c[j] -> a[j] = b[j] + scalar * c[j] -> put a[j]; each
 *  step waited for. Reports its LDM loop as work when `account` is set. */
typedef struct {
    double *a, *b, *c;
    double scalar;
    int bytes, iters, triad, active, account;
} tm_stream_args;

/** strided_kernel: copy of 24 KB descriptors: strided get of `iters` chunks of src (blocks of
 *  bsize bytes, gaps of `gap` bytes) into LDM, then strided put to dst, each waited. */
typedef struct {
    char *src, *dst;
    int bsize, gap, iters;
} tm_strided_args;

/** compute_kernel: reports `reports` times the work below, no DMA (unpaired_extra_cycles as
 *  the generated code reports it: what its slow_cycles would take more with no P0/P1
 *  pairing). */
typedef struct {
    long long p0, p1, either, slow_cycles, flops;
    int reports;
    long long unpaired_extra_cycles;
} tm_compute_args;

/** overlap_kernel: get `bytes` bytes of src + id * bytes into LDM; mode 0: account
 *  `compute_cycles` of P1 work, then wait; mode 1: wait, then account; mode 2: wait only;
 *  mode 3: issue the get and never call athread_emu_wait_reply (old code). */
typedef struct {
    char *src;
    int bytes, mode;
    long long compute_cycles;
} tm_overlap_args;

/** dma_only_kernel (timing_model_dma_kernels.c): DMA and nothing else. For k < iters, CPE id
 *  (if id < active) moves `bytes` bytes between LDM and main memory, in blocks of bsize
 *  bytes separated by gaps of `gap` bytes (bsize 0: one contiguous block), each request
 *  waited for: gets (put = 0) or puts (put = 1). The main-memory side is mem for every CPE
 *  and iteration when same_addr is set (swDNN's dma_read: all CPEs read the same
 *  addresses), else chunk id + 64 k of mem (chunks of bytes / bsize * (bsize + gap)). */
typedef struct {
    char *mem;
    int bytes, bsize, gap, iters, same_addr, put, active;
} tm_dma_only_args;

#ifdef __cplusplus
}
#endif

#endif
