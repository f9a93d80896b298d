/** \file
 * DMA-only CPE kernel of the timing model's calibration (tests/timing_model_test.cpp and
 * apps/bench/model_calibration.cpp): reads-only and writes-only patterns, e.g. swDNN's
 * "Multiple DMA Read" test (feifeibear/swDNN dma_read: 20 blocking strided gets per CPE, all
 * CPEs the same addresses). Real CPE code (C99, <slave.h>), emulator calls under
 * ATHREAD_EMULATOR as in timing_model_kernels.c.
 */
#include <slave.h>
#include <stddef.h>

#include "timing_model_kernels.h"

/* The CPE runtime's LDM allocator (slave.h does not declare it). */
void *ldm_malloc(size_t size);
void ldm_free(void *p, size_t size);

#ifdef ATHREAD_EMULATOR
#include <athread_emu.h>
#define dma_only_kernel slave_dma_only_kernel
#define TM_WAIT(r) athread_emu_wait_reply(&(r))
#else
#define TM_WAIT(r) ((void)0)
#endif

void dma_only_kernel(void *arg) {
    tm_dma_only_args *p = (tm_dma_only_args *)arg;
    int id = athread_get_id(-1), k;
    size_t chunk = p->bsize > 0 ? (size_t)(p->bytes / p->bsize) * (size_t)(p->bsize + p->gap)
                                : (size_t)p->bytes;
    char *buf;
    volatile int r = 0;
    if (id >= p->active)
        return;
    buf = (char *)ldm_malloc((size_t)p->bytes);
    for (k = 0; k < p->iters; k++) {
        char *mem = p->mem + (p->same_addr ? 0 : (size_t)(id + 64 * k) * chunk);
        if (p->put)
            athread_put(PE_MODE, buf, mem, p->bytes, (void *)&r, p->gap, p->bsize);
        else
            athread_get(PE_MODE, mem, buf, p->bytes, (void *)&r, 0, p->gap, p->bsize);
        while (r != k + 1) {
        }
        TM_WAIT(r);
    }
    ldm_free(buf, (size_t)p->bytes);
}
