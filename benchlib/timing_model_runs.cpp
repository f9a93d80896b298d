/** \file
 * The DMA measurements shared by the timing-model tests and the calibration benchmark.
 */
#include "timing_model_runs.h"

#include "timing_model_kernels.h"

#include <athread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
extern void SLAVE_FUN(stream_kernel)(void *);
extern void SLAVE_FUN(strided_kernel)(void *);
extern void SLAVE_FUN(dma_only_kernel)(void *);
}

namespace tm_runs {

namespace {

const int kCpes = 64;

const athread_emu_kernel_stats *last_kernel() {
    return athread_emu_stats_get(athread_emu_stats_count() - 1);
}

} // namespace

Mem::Mem(size_t n) : p(static_cast<char *>(std::aligned_alloc(128, (n + 127) / 128 * 128))) {
    if (!p) {
        std::fprintf(stderr, "error: out of memory (%zu bytes) for a timing-model run\n", n);
        std::exit(1);
    }
    std::memset(p, 0, n);
}

Mem::~Mem() {
    std::free(p);
}

Run stream(int bytes, bool triad, int active, int iters, bool account, double *first_a) {
    if (iters == 0)
        iters = std::clamp((1 << 20) / bytes, 8, 1024);
    const size_t n = (size_t)kCpes * iters * bytes + 256;
    Mem a(n), b(n), c(n);
    tm_stream_args args;
    std::memset(&args, 0, sizeof args);
    // CAND's arrays start 10 doubles after a 128-byte boundary (STREAM's OFFSET).
    args.a = reinterpret_cast<double *>(a.p + 80);
    args.b = reinterpret_cast<double *>(b.p + 80);
    args.c = reinterpret_cast<double *>(c.p + 80);
    for (size_t i = 0; i < (n - 256) / 8; i++)
        args.b[i] = 1.0, args.c[i] = 2.0;
    args.scalar = 3.0;
    args.bytes = bytes;
    args.iters = iters;
    args.triad = triad;
    args.active = active;
    args.account = account;
    athread_emu_set_kernel_name(triad ? "triad" : "copy");
    athread_spawn(stream_kernel, &args);
    athread_join();
    if (first_a)
        *first_a = args.a[(size_t)(active - 1) * bytes / 8];
    const athread_emu_kernel_stats *r = last_kernel();
    return {(triad ? 3.0 : 2.0) * bytes * iters * active / r->modelled_seconds / 1e9, r};
}

Run strided(int bsize, int gap) {
    const int desc = 24 * 1024, iters = 4;
    const size_t span = (size_t)desc / bsize * (bsize + gap);
    const size_t n = (size_t)kCpes * iters * span + 256;
    Mem src(n), dst(n);
    tm_strided_args args{src.p + 80, dst.p + 80, bsize, gap, iters};
    athread_emu_set_kernel_name("strided_copy");
    athread_spawn(strided_kernel, &args);
    athread_join();
    const athread_emu_kernel_stats *r = last_kernel();
    return {2.0 * desc * iters * kCpes / r->modelled_seconds / 1e9, r};
}

Run dma_only(int bytes, int bsize, int gap, int iters, bool same_addr, bool put, int active) {
    const size_t chunk = bsize > 0 ? (size_t)(bytes / bsize) * (bsize + gap) : (size_t)bytes;
    Mem mem((same_addr ? 1 : (size_t)kCpes * iters) * chunk);
    tm_dma_only_args args{mem.p, bytes, bsize, gap, iters, same_addr, put, active};
    athread_emu_set_kernel_name(put ? "puts_only" : "gets_only");
    athread_spawn(dma_only_kernel, &args);
    athread_join();
    const athread_emu_kernel_stats *r = last_kernel();
    return {(double)bytes * iters * active / r->modelled_seconds / 1e9, r};
}

Run read_plateau() {
    return dma_only(4096, 0, 0, 256, false);
}

} // namespace tm_runs
