/** \file
 * Hand-written SW26010-Pro CPE kernels for emulator_pro_test.cpp: CRTS DMA (strided, column
 * broadcast), RMA (row broadcast, get), floatv8 arithmetic and their misuses. GNU C99, built
 * against the emulator's include/sw26010-pro headers with -D__sw_slave__, as swgcc -mslave
 * would build them.
 */
#include <crts.h>
#include <simd.h>

#include "emulator_pro_kernels.h"

#ifdef ATHREAD_EMULATOR
#define pro_axpy_kernel slave_pro_axpy_kernel
#define pro_rma_kernel slave_pro_rma_kernel
#define pro_colcast_kernel slave_pro_colcast_kernel
#define pro_misuse_kernel slave_pro_misuse_kernel
#endif

__thread_local float xs[2 * 64] __attribute__((aligned(64)));
__thread_local float ys[2 * 64] __attribute__((aligned(64)));
__thread_local float bcast[16] __attribute__((aligned(64)));
__thread_local float own[16] __attribute__((aligned(64)));
__thread_local float nb[16] __attribute__((aligned(64)));
__thread_local crts_rply_t remote_reply;

void pro_axpy_kernel(pro_axpy_args *arg);
void pro_axpy_kernel(pro_axpy_args *arg) {
    pro_axpy_args a;
    crts_rply_t r = 0;
    int n = 0;
    CRTS_dma_iget(&a, arg, sizeof a, &r);
    CRTS_dma_wait_value(&r, ++n);
    const int bytes = a.cols * (int)sizeof(float);
    const int gap = (a.pitch - a.cols) * (int)sizeof(float);
    const floatv8 alpha = simd_vcpyfs(a.alpha);
    for (int p = CRTS_tid; 2 * p < a.rows; p += 64) {
        const long first = 2L * p * a.pitch;
        CRTS_dma_iget_stride(xs, a.x + first, 2 * bytes, bytes, gap, &r);
        CRTS_dma_iget_stride(ys, a.y + first, 2 * bytes, bytes, gap, &r);
        n += 2;
        CRTS_dma_wait_value(&r, n);
        for (int i = 0; i < 2 * a.cols; i += 8) {
            floatv8 x, y;
            simd_load(x, xs + i);
            simd_load(y, ys + i);
            y = simd_vmas(alpha, x, y);
            simd_store(y, ys + i);
        }
        CRTS_dma_iput_stride(a.y + first, ys, 2 * bytes, bytes, gap, &r);
        CRTS_dma_wait_value(&r, ++n);
    }
}

void pro_rma_kernel(pro_rma_args *arg);
void pro_rma_kernel(pro_rma_args *arg) {
    pro_rma_args a;
    CRTS_dma_get(&a, arg, sizeof a);
    crts_rply_t local = 0, got = 0, put = 0;
    remote_reply = 0;
    for (int i = 0; i < 16; i++)
        own[i] = (float)(CRTS_tid * 1000 + i);
    if (CRTS_cid == a.root)
        for (int i = 0; i < 16; i++)
            bcast[i] = (float)(CRTS_rid * 100 + i);
    CRTS_ssync_array(); /* every CPE's buffers and reply word are ready */
    if (CRTS_cid == a.root) {
        CRTS_rma_row_ibcast(bcast, bcast, sizeof bcast, &local, &remote_reply);
        CRTS_rma_wait_value(&local, 1);
    }
    CRTS_rma_wait_value(&remote_reply, 1);
    CRTS_rma_iget(nb, &got, sizeof nb, CRTS_tid ^ 1, own, &remote_reply);
    CRTS_rma_wait_value(&got, 1);
    CRTS_ssync_array(); /* the neighbour's read of own is done before anyone returns */
    CRTS_dma_iput(a.out + CRTS_tid * 32, bcast, sizeof bcast, &put);
    CRTS_dma_iput(a.out + CRTS_tid * 32 + 16, nb, sizeof nb, &put);
    CRTS_dma_wait_value(&put, 2);
    CRTS_dma_put(&arg->bcast_reply[(int)CRTS_tid], (int *)&remote_reply, sizeof(int));
}

void pro_colcast_kernel(pro_colcast_args *arg);
void pro_colcast_kernel(pro_colcast_args *arg) {
    pro_colcast_args a;
    CRTS_dma_get(&a, arg, sizeof a);
    crts_rply_t r = 0;
    CRTS_ssync_col();
    if (CRTS_rid == 0) {
        CRTS_dma_col_ibcast(bcast, a.in + CRTS_cid * 16, sizeof bcast, &r);
        CRTS_dma_wait_value(&r, 1);
    }
    CRTS_ssync_col(); /* the receivers learn of the data through the barrier */
    CRTS_dma_put(a.out + CRTS_tid * 16, bcast, sizeof bcast);
}

void pro_misuse_kernel(pro_misuse_args *arg);
void pro_misuse_kernel(pro_misuse_args *arg) {
    pro_misuse_args a;
    CRTS_dma_get(&a, arg, sizeof a);
    crts_rply_t l = 0, r = 0;
    CRTS_ssync_array();
    if (CRTS_tid != a.cpe)
        return;
    if (a.what == 1)
        CRTS_rma_iput((char *)own + 2, &l, 8, 0, nb, &remote_reply);
    if (a.what == 2)
        CRTS_rma_iput(own, &l, 6, 0, nb, &remote_reply);
    if (a.what == 3) {
        CRTS_dma_iget(own, arg, sizeof a, &r);
        CRTS_dma_wait_value(&r, 2);
    }
}
