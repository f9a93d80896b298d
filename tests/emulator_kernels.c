/** \file
 * Hand-written CPE kernels for the athread emulator tests, written as real CPE code
 * (C99, <slave.h> only). With the real slave compiler, `kernel` becomes `slave_kernel`
 * by itself; for the emulator the names are prefixed here.
 */
#include <simd.h>
#include <slave.h>
#include <stddef.h>
#include <string.h>

#include "emulator_kernels.h"

/* The real slave.h does not declare them (shared/sunway/athread-api.md): CPE code that
 * calls them declares them itself. */
void *ldm_malloc(size_t size);
void ldm_free(void *p, size_t size);

#ifdef ATHREAD_EMULATOR
#define strided_get_kernel slave_strided_get_kernel
#define strided_put_kernel slave_strided_put_kernel
#define reply_kernel slave_reply_kernel
#define id_kernel slave_id_kernel
#define syn_kernel slave_syn_kernel
#define get_once_kernel slave_get_once_kernel
#define put_once_kernel slave_put_once_kernel
#define ldm_alloc_kernel slave_ldm_alloc_kernel
#define ldm_free_kernel slave_ldm_free_kernel
#define tls_kernel slave_tls_kernel
#define tls_dma_kernel slave_tls_dma_kernel
#define main_as_ldm_kernel slave_main_as_ldm_kernel
#define syn_skip_kernel slave_syn_skip_kernel
#define leak_kernel slave_leak_kernel
#define align_kernel slave_align_kernel
#define tls_small_kernel slave_tls_small_kernel
#define local_array_kernel slave_local_array_kernel
#define regcomm_ring_kernel slave_regcomm_ring_kernel
#define regcomm_stream_kernel slave_regcomm_stream_kernel
#define regcomm_bcast_kernel slave_regcomm_bcast_kernel
#define regcomm_deadlock_kernel slave_regcomm_deadlock_kernel
#define regcomm_put_kernel slave_regcomm_put_kernel
#define regcomm_mismatch_kernel slave_regcomm_mismatch_kernel
#define regcomm_timing_kernel slave_regcomm_timing_kernel
#define bcast_get_kernel slave_bcast_get_kernel
#define bcast_put_kernel slave_bcast_put_kernel
#endif
#ifdef ATHREAD_EMULATOR
#include <athread_emu.h>
#endif

static int acting(const misc_args *a) {
    return a->only_cpe < 0 || a->only_cpe == athread_get_id(-1);
}

static int guards_intact(const unsigned char *g) {
    int i;
    for (i = 0; i < EMU_TEST_GUARD; i++)
        if (g[i] != EMU_TEST_GUARD_BYTE)
            return 0;
    return 1;
}

void strided_get_kernel(void *arg) {
    strided_get_args *a = (strided_get_args *)arg;
    int id = athread_get_id(-1);
    size_t bytes = (size_t)a->len + 2 * EMU_TEST_GUARD;
    unsigned char *buf = (unsigned char *)ldm_malloc(bytes);
    volatile int reply = 0;
    memset(buf, EMU_TEST_GUARD_BYTE, bytes);
    athread_get(PE_MODE, (void *)a->src, buf + EMU_TEST_GUARD, a->len, (void *)&reply, 0, a->stride,
                a->bsize);
    while (reply != 1) {
    }
    a->guard_ok[id] = guards_intact(buf) && guards_intact(buf + EMU_TEST_GUARD + a->len);
    athread_put(PE_MODE, buf + EMU_TEST_GUARD, a->out + (size_t)id * a->len, a->len, (void *)&reply,
                0, 0);
    while (reply != 2) {
    }
    ldm_free(buf, bytes);
}

void strided_put_kernel(void *arg) {
    strided_put_args *a = (strided_put_args *)arg;
    int id = athread_get_id(-1), i;
    unsigned char *buf = (unsigned char *)ldm_malloc((size_t)a->len);
    volatile int reply = 0;
    for (i = 0; i < a->len; i++)
        buf[i] = (unsigned char)((id * 31 + i) & 0xff);
    athread_put(PE_MODE, buf, a->dst + (size_t)id * a->span, a->len, (void *)&reply, a->stride,
                a->bsize);
    while (reply != 1) {
    }
    ldm_free(buf, (size_t)a->len);
}

void reply_kernel(void *arg) {
    reply_args *a = (reply_args *)arg;
    int id = athread_get_id(-1), i, ok = 1;
    int in[5][16]; /* local arrays live in LDM (the CPE stack) */
    int *outbuf = (int *)ldm_malloc(3 * 16 * sizeof(int));
    volatile int get_reply = 0, put_reply = 0;
    for (i = 0; i < 5; i++)
        athread_get(PE_MODE, (void *)(a->src + 16 * i), in[i], 16 * sizeof(int), (void *)&get_reply,
                    0, 0, 0);
    while (get_reply != 5) {
    }
    for (i = 0; i < 5 * 16; i++)
        if (in[i / 16][i % 16] != a->src[i])
            ok = 0;
    for (i = 0; i < 3 * 16; i++)
        outbuf[i] = id * 1000 + i;
    for (i = 0; i < 3; i++)
        athread_put(PE_MODE, outbuf + 16 * i, a->dst + (size_t)id * 48 + 16 * i, 16 * sizeof(int),
                    (void *)&put_reply, 0, 0);
    while (put_reply != 3) {
    }
    a->get_reply[id] = get_reply;
    a->put_reply[id] = put_reply;
    a->data_ok[id] = ok;
    ldm_free(outbuf, 3 * 16 * sizeof(int));
}

void id_kernel(void *arg) {
    id_args *a = (id_args *)arg;
    int id = athread_get_id(-1);
    __atomic_fetch_add(&a->seen[id], 1, __ATOMIC_SEQ_CST);
    a->id_of_core[id] = athread_get_id(id);
    if (id == 0)
        a->bad_core = athread_get_id(64);
}

void syn_kernel(void *arg) {
    syn_args *a = (syn_args *)arg;
    int id = athread_get_id(-1), row = id >> 3, col = id & 7, p;
    for (p = 0; p < EMU_TEST_PHASES; p++) {
        __atomic_fetch_add(&a->array_count[p], 1, __ATOMIC_SEQ_CST);
        athread_syn(ARRAY_SCOPE, 0xffff);
        if (__atomic_load_n(&a->array_count[p], __ATOMIC_SEQ_CST) != 64)
            __atomic_fetch_add(&a->errors, 1, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&a->row_count[row][p], 1, __ATOMIC_SEQ_CST);
        athread_syn(ROW_SCOPE, 0xff);
        if (__atomic_load_n(&a->row_count[row][p], __ATOMIC_SEQ_CST) != 8)
            __atomic_fetch_add(&a->errors, 1, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&a->col_count[col][p], 1, __ATOMIC_SEQ_CST);
        athread_syn(COL_SCOPE, 0xff);
        if (__atomic_load_n(&a->col_count[col][p], __ATOMIC_SEQ_CST) != 8)
            __atomic_fetch_add(&a->errors, 1, __ATOMIC_SEQ_CST);
    }
}

/** One get of (offset, len, stride, bsize) from buf into an LDM block of ldm_bytes. */
void get_once_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    unsigned char *ldm;
    volatile int reply = 0;
    if (!acting(a))
        return;
    ldm = (unsigned char *)ldm_malloc(a->ldm_bytes);
    athread_get(PE_MODE, a->buf + a->offset, ldm, a->len, (void *)&reply, 0, a->stride, a->bsize);
    while (reply != 1) {
    }
    ldm_free(ldm, a->ldm_bytes);
}

/** One put of (offset, len, stride, bsize) to buf from an LDM block of ldm_bytes. */
void put_once_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    unsigned char *ldm;
    volatile int reply = 0;
    if (!acting(a))
        return;
    ldm = (unsigned char *)ldm_malloc(a->ldm_bytes);
    memset(ldm, 1, a->ldm_bytes);
    athread_put(PE_MODE, ldm, a->buf + a->offset, a->len, (void *)&reply, a->stride, a->bsize);
    while (reply != 1) {
    }
    ldm_free(ldm, a->ldm_bytes);
}

/** ldm_malloc(ldm_bytes) twice (the second only if len > 1), then frees. */
void ldm_alloc_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    void *p, *q = NULL;
    if (!acting(a))
        return;
    p = ldm_malloc(a->ldm_bytes);
    if (a->len > 1)
        q = ldm_malloc(a->ldm_bytes);
    if (q)
        ldm_free(q, a->ldm_bytes);
    ldm_free(p, a->ldm_bytes);
}

/** ldm_malloc(ldm_bytes) then ldm_free(p, free_bytes). */
void ldm_free_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    void *p;
    if (!acting(a))
        return;
    p = ldm_malloc(a->ldm_bytes);
    ldm_free(p, a->free_bytes);
}

/* __thread_local data: 16 KB array plus a counter, one copy per CPE. */
__thread_local int tl_counter = 7;
__thread_local unsigned char tl_big[16384];

void tls_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    int id = athread_get_id(-1);
    tl_counter += id;
    athread_syn(ARRAY_SCOPE, 0xffff); /* everybody has written its own copy */
    a->out[id] = tl_counter;
}

/** DMA into and out of a __thread_local array. */
void tls_dma_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    int id = athread_get_id(-1);
    volatile int reply = 0;
    athread_get(PE_MODE, a->buf, tl_big, a->len, (void *)&reply, 0, 0, 0);
    while (reply != 1) {
    }
    tl_big[0] = (unsigned char)id;
    athread_put(PE_MODE, tl_big, a->buf + (size_t)(id + 1) * a->len, a->len, (void *)&reply, 0, 0);
    while (reply != 2) {
    }
}

/* A plain global of CPE code lives in main memory, not in LDM. */
unsigned char not_ldm[256];

void main_as_ldm_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    volatile int reply = 0;
    if (!acting(a))
        return;
    athread_get(PE_MODE, a->buf, not_ldm, 64, (void *)&reply, 0, 0, 0);
}

/** CPE only_cpe skips the barrier: would hang the real machine. */
void syn_skip_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    if (athread_get_id(-1) == a->only_cpe)
        return;
    athread_syn(ARRAY_SCOPE, 0xffff);
}

void leak_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    if (!acting(a))
        return;
    (void)ldm_malloc(a->ldm_bytes);
}

/** Records the addresses of three ldm_malloc blocks of odd sizes. */
void align_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    int id = athread_get_id(-1);
    void *p = ldm_malloc(3), *q = ldm_malloc(100), *r = ldm_malloc(129);
    if (id == 0) {
        a->out[0] = (long long)(size_t)p;
        a->out[1] = (long long)(size_t)q;
        a->out[2] = (long long)(size_t)r;
    }
    ldm_free(q, 100);
    ldm_free(p, 3);
    ldm_free(r, 129);
}

/* A small __thread_local array; tls_small_kernel gets len bytes into it. */
__thread_local int tl_small[8];

void tls_small_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    volatile int reply = 0;
    if (!acting(a))
        return;
    athread_get(PE_MODE, a->buf, tl_small, a->len, (void *)&reply, 0, 0, 0);
    while (reply != 1) {
    }
    a->out[athread_get_id(-1)] = tl_small[0];
}

/** Gets len bytes into a local float[16]: on the real machine a local array is on the
 *  CPE's stack, in LDM. */
void local_array_kernel(void *arg) {
    misc_args *a = (misc_args *)arg;
    float local[16];
    volatile int reply = 0;
    if (!acting(a))
        return;
    memset(local, 0, sizeof local);
    athread_get(PE_MODE, a->buf, local, a->len, (void *)&reply, 0, 0, 0);
    while (reply != 1) {
    }
    a->out[athread_get_id(-1)] = (long long)local[0];
}

/* ---------------------------------------------------------------- register communication */

static int reg_pos(const regcomm_args *a, int id) {
    return a->bus == 0 ? (id & 7) : (id >> 3);
}

/* (Vectors go by address: x86 without AVX has no register for a 32-byte vector.) */
/** Sends the k-th value of CPE id (lane j = id * 1000 + k * 10 + j) to dest. */
static void reg_put(const regcomm_args *a, int id, int k, int dest) {
    int b = id * 1000 + k * 10;
    intv8 v = simd_set_intv8(b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7);
    if (a->bus == 0)
        simd_putr(v, dest);
    else
        simd_putc(v, dest);
}

/** Receives one value and records it as CPE id's k-th. */
static void reg_get(regcomm_args *a, int id, int k) {
    int lanes[8], j;
    intv8 v = simd_set_intv8(0, 0, 0, 0, 0, 0, 0, 0);
    if (a->bus == 0)
        v = simd_getr(v);
    else
        v = simd_getc(v);
    simd_storeu(v, lanes);
    a->received[id][k] = lanes[0];
    for (j = 1; j < 8; j++)
        if (lanes[j] != lanes[0] + j)
            a->lanes_ok[id] = 0;
}

/** Ring: every CPE sends its value to the next position of its row / column, then
 *  receives from the previous one. */
void regcomm_ring_kernel(void *arg) {
    regcomm_args *a = (regcomm_args *)arg;
    int id = athread_get_id(-1);
    a->lanes_ok[id] = 1;
    reg_put(a, id, 0, (reg_pos(a, id) + 1) & 7);
    reg_get(a, id, 0);
}

/** Stream: position src of every row / column sends `count` values to position dst, which
 *  receives them (more values than a receive buffer holds: the sender waits). */
void regcomm_stream_kernel(void *arg) {
    regcomm_args *a = (regcomm_args *)arg;
    int id = athread_get_id(-1), k;
    a->lanes_ok[id] = 1;
    if (reg_pos(a, id) == a->src)
        for (k = 0; k < a->count; k++)
            reg_put(a, id, k, a->dst);
    else if (reg_pos(a, id) == a->dst)
        for (k = 0; k < a->count; k++)
            reg_get(a, id, k);
}

/** Broadcast: position src of every row / column sends `count` values with destination 8,
 *  every other CPE of the row / column receives them. */
void regcomm_bcast_kernel(void *arg) {
    regcomm_args *a = (regcomm_args *)arg;
    int id = athread_get_id(-1), k;
    a->lanes_ok[id] = 1;
    if (reg_pos(a, id) == a->src)
        for (k = 0; k < a->count; k++)
            reg_put(a, id, k, 8);
    else
        for (k = 0; k < a->count; k++)
            reg_get(a, id, k);
}

/** CPEs 0 and 1 (same row) both receive first: a deadlock. */
void regcomm_deadlock_kernel(void *arg) {
    regcomm_args *a = (regcomm_args *)arg;
    int id = athread_get_id(-1);
    if (id > 1)
        return;
    reg_get(a, id, 0);
    reg_put(a, id, 0, 1 - id);
}

/** CPE only_cpe puts one value with destination dst; nobody receives. */
void regcomm_put_kernel(void *arg) {
    regcomm_args *a = (regcomm_args *)arg;
    if (athread_get_id(-1) == a->only_cpe)
        reg_put(a, a->only_cpe, 0, a->dst);
    /* No CPE returns before the put is done: the receiver is still running when the value
       arrives (else the error would depend on the threads' timing). */
    athread_syn(ARRAY_SCOPE, 0xffff);
}

/** CPE 0 puts a floatv4 to column 1; CPE 1 receives a doublev4. */
void regcomm_mismatch_kernel(void *arg) {
    regcomm_args *a = (regcomm_args *)arg;
    int id = athread_get_id(-1);
    (void)a;
    if (id == 0) {
        floatv4 f = simd_set_floatv4(1, 2, 3, 4);
        simd_putr(f, 1);
    } else if (id == 1) {
        doublev4 d = simd_set_doublev4(0, 0, 0, 0);
        d = simd_getr(d);
        a->lanes_ok[1] = 0;
    }
}

/** CPE 0 computes `delay` cycles (reported to the timing model), then puts to column 1;
 *  CPE 1 receives at once, so it waits about delay + latency. */
void regcomm_timing_kernel(void *arg) {
    regcomm_args *a = (regcomm_args *)arg;
    int id = athread_get_id(-1);
    if (id == 0) {
#ifdef ATHREAD_EMULATOR
        athread_emu_work w = {0, 0, 0, 0, 0, 0, 0, 0};
        w.slow_cycles = a->delay;
        athread_emu_account(&w);
#endif
        reg_put(a, 0, 0, 1);
    } else if (id == 1) {
        reg_get(a, 1, 0);
    }
}

/* ---------------------------------------------------------------- broadcast DMA */

__thread_local unsigned char bcast_tls[EMU_TEST_BCAST_MAX] __attribute__((aligned(128)));

void bcast_get_kernel(void *arg) {
    bcast_args *a = (bcast_args *)arg;
    int id = athread_get_id(-1);
    volatile int reply = 0;
    unsigned char local[EMU_TEST_BCAST_MAX];
    unsigned char *buf = bcast_tls;
    size_t bytes = (size_t)(id == a->issuer ? a->issuer_ldm_bytes : a->ldm_bytes);
    if (a->where == 1)
        buf = (unsigned char *)ldm_malloc(bytes);
    if (a->where == 2)
        buf = local;
    memset(buf, 0xEE, a->where == 1 ? bytes : (size_t)EMU_TEST_BCAST_MAX);
    athread_syn(ARRAY_SCOPE, 0xffff);
    if (a->pe == 2 || (a->pe == 1 && id == a->issuer)) {
        athread_get(PE_MODE, (void *)a->src, buf, a->len, (void *)&reply, 0, 0, 0);
        while (reply != 1) {
        }
#ifdef ATHREAD_EMULATOR
        athread_emu_wait_reply(&reply);
#endif
    } else if (a->pe == 0 && id == a->issuer) {
        athread_get(BCAST_MODE, (void *)a->src, buf, a->len, (void *)&reply, (char)a->mask, 0, 0);
        while (reply != 1) {
        }
#ifdef ATHREAD_EMULATOR
        athread_emu_wait_reply(&reply);
#endif
    }
    a->reply_seen[id] = reply;
    athread_syn(ARRAY_SCOPE, 0xffff);
    if (a->out) {
        reply = 0;
        athread_put(PE_MODE, buf, a->out + (size_t)id * a->len, a->len, (void *)&reply, 0, 0);
        while (reply != 1) {
        }
    }
    if (a->where == 1)
        ldm_free(buf, bytes);
}

/** CPE issuer tries athread_put in BCAST_MODE. */
void bcast_put_kernel(void *arg) {
    bcast_args *a = (bcast_args *)arg;
    volatile int reply = 0;
    if (athread_get_id(-1) != a->issuer)
        return;
    athread_put(BCAST_MODE, bcast_tls, a->out, a->len, (void *)&reply, 0, 0);
}
