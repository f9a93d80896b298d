/** \file
 * Hand-written CPE kernels for the timing model tests, written as real CPE code (C99,
 * <slave.h>), with the two emulator-only calls of the timing model under ATHREAD_EMULATOR
 * as the generated code has them.
 */
#include <slave.h>
#include <stddef.h>
#include <string.h>

#include "timing_model_kernels.h"

/* In the CPE runtime library; the installed slave.h does not declare them. */
void *ldm_malloc(size_t size);
void ldm_free(void *p, size_t size);

#ifdef ATHREAD_EMULATOR
#include <athread_emu.h>
#define stream_kernel slave_stream_kernel
#define strided_kernel slave_strided_kernel
#define compute_kernel slave_compute_kernel
#define overlap_kernel slave_overlap_kernel
#define TM_WORK_DECL athread_emu_work tm_work = {0, 0, 0, 0, 0, 0, 0, 0};
#define TM_ACCOUNT() athread_emu_account(&tm_work)
#define TM_WAIT(r) athread_emu_wait_reply(&(r))
#else
#define TM_WORK_DECL
#define TM_ACCOUNT() ((void)0)
#define TM_WAIT(r) ((void)0)
#endif

void stream_kernel(void *arg) {
    tm_stream_args *p = (tm_stream_args *)arg;
    int id = athread_get_id(-1), k, i;
    int n = p->bytes / (int)sizeof(double);
    long long nvec = (p->bytes + 31) / 32; /* doublev4 vectors of the LDM loop */
    double *x, *y;
    volatile int rg = 0, rp = 0;
    TM_WORK_DECL
    if (id >= p->active)
        return;
    x = (double *)ldm_malloc((size_t)p->bytes);
    y = (double *)ldm_malloc((size_t)p->bytes);
    for (k = 0; k < p->iters; k++) {
        size_t j = (size_t)(id + 64 * k) * (size_t)n;
        if (!p->triad) {
            athread_get(PE_MODE, p->a + j, x, p->bytes, (void *)&rg, 0, 0, 0);
            while (rg != k + 1) {
            }
            TM_WAIT(rg);
            for (i = 0; i < n; i++)
                y[i] = x[i];
#ifdef ATHREAD_EMULATOR
            if (p->account)
                tm_work.p1 += 2 * nvec; /* vector load + store */
            TM_ACCOUNT();
#endif
            athread_put(PE_MODE, y, p->c + j, p->bytes, (void *)&rp, 0, 0);
        } else {
            athread_get(PE_MODE, p->b + j, x, p->bytes, (void *)&rg, 0, 0, 0);
            athread_get(PE_MODE, p->c + j, y, p->bytes, (void *)&rg, 0, 0, 0);
            while (rg != 2 * k + 2) {
            }
            TM_WAIT(rg);
            for (i = 0; i < n; i++)
                y[i] = x[i] + p->scalar * y[i];
#ifdef ATHREAD_EMULATOR
            if (p->account) {
                tm_work.p0 += nvec;     /* vmad */
                tm_work.p1 += 3 * nvec; /* 2 loads, 1 store */
                tm_work.flops += 8 * nvec;
            }
            TM_ACCOUNT();
#endif
            athread_put(PE_MODE, y, p->a + j, p->bytes, (void *)&rp, 0, 0);
        }
        while (rp != k + 1) {
        }
        TM_WAIT(rp);
    }
    ldm_free(x, (size_t)p->bytes);
    ldm_free(y, (size_t)p->bytes);
}

#define TM_DESC_BYTES (24 * 1024)

void strided_kernel(void *arg) {
    tm_strided_args *p = (tm_strided_args *)arg;
    int id = athread_get_id(-1), k;
    size_t span = (size_t)TM_DESC_BYTES / (size_t)p->bsize * (size_t)(p->bsize + p->gap);
    char *buf = (char *)ldm_malloc(TM_DESC_BYTES);
    volatile int rg = 0, rp = 0;
    for (k = 0; k < p->iters; k++) {
        size_t off = (size_t)(id + 64 * k) * span;
        athread_get(PE_MODE, p->src + off, buf, TM_DESC_BYTES, (void *)&rg, 0, p->gap, p->bsize);
        while (rg != k + 1) {
        }
        TM_WAIT(rg);
        athread_put(PE_MODE, buf, p->dst + off, TM_DESC_BYTES, (void *)&rp, p->gap, p->bsize);
        while (rp != k + 1) {
        }
        TM_WAIT(rp);
    }
    ldm_free(buf, TM_DESC_BYTES);
}

void compute_kernel(void *arg) {
    tm_compute_args *p = (tm_compute_args *)arg;
    int k;
    TM_WORK_DECL
    for (k = 0; k < p->reports; k++) {
#ifdef ATHREAD_EMULATOR
        tm_work.p0 = p->p0;
        tm_work.p1 = p->p1;
        tm_work.either = p->either;
        tm_work.slow_cycles = p->slow_cycles;
        tm_work.flops = p->flops;
        tm_work.unpaired_extra_cycles = p->unpaired_extra_cycles;
#endif
        TM_ACCOUNT();
    }
}

void overlap_kernel(void *arg) {
    tm_overlap_args *p = (tm_overlap_args *)arg;
    int id = athread_get_id(-1);
    char *buf = (char *)ldm_malloc((size_t)p->bytes);
    volatile int r = 0;
    TM_WORK_DECL
    athread_get(PE_MODE, p->src + (size_t)id * (size_t)p->bytes, buf, p->bytes, (void *)&r, 0, 0,
                0);
#ifdef ATHREAD_EMULATOR
    tm_work.p1 = p->compute_cycles;
#endif
    if (p->mode == 0)
        TM_ACCOUNT();
    while (r != 1) {
    }
    if (p->mode != 3)
        TM_WAIT(r);
    if (p->mode == 1)
        TM_ACCOUNT();
    ldm_free(buf, (size_t)p->bytes);
}
