/** \file
 * Argument structs shared by the hand-written CPE kernels of emulator_kernels.c (C99,
 * built against the emulator's slave.h) and the host tests of emulator_test.cpp.
 */
#ifndef EMULATOR_KERNELS_H
#define EMULATOR_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Guard bytes kernels put around LDM buffers to check that DMA writes exactly len. */
#define EMU_TEST_GUARD 64
#define EMU_TEST_GUARD_BYTE 0x5C

/** strided_get_kernel: every CPE gets (len, stride, bsize) from src into LDM, checks the
 *  guards, then puts the LDM bytes contiguously to out + id * len. */
typedef struct {
    const unsigned char *src;
    unsigned char *out;
    int len, stride, bsize;
    int guard_ok[64];
} strided_get_args;

/** strided_put_kernel: every CPE fills len LDM bytes with (id * 31 + i) & 0xff and puts
 *  them with (stride, bsize) to dst + id * span. */
typedef struct {
    unsigned char *dst;
    int len, stride, bsize, span;
} strided_put_args;

/** reply_kernel: 5 gets sharing one reply word, 3 puts sharing another; records the
 *  reply values seen after the waits and after all requests. */
typedef struct {
    const int *src; /* 5 * 16 ints */
    int *dst;       /* 64 * 3 * 16 ints */
    int get_reply[64], put_reply[64], data_ok[64];
} reply_args;

/** id_kernel: counts athread_get_id(-1) values, records get_id(core) answers. */
typedef struct {
    int seen[64];
    int id_of_core[64];
    int bad_core; /* athread_get_id(64) */
} id_args;

/** syn_kernel: phase counters checked after ARRAY / ROW / COL barriers. */
#define EMU_TEST_PHASES 20
typedef struct {
    int array_count[EMU_TEST_PHASES];
    int row_count[8][EMU_TEST_PHASES];
    int col_count[8][EMU_TEST_PHASES];
    int errors;
} syn_args;

/** Generic argument of the small kernels used by counter and death tests. */
typedef struct {
    unsigned char *buf; /* main memory */
    long long offset;   /* from buf */
    int len, stride, bsize;
    size_t ldm_bytes;  /* for ldm_malloc */
    size_t free_bytes; /* for ldm_free */
    int only_cpe;      /* -1: every CPE acts, else only this one */
    long long out[64];
} misc_args;

/** Register-communication kernels (regcomm_*_kernel). `bus`: 0 row (simd_putr/getr), 1
 *  column (simd_putc/getc); positions are columns on a row bus, rows on a column bus. */
#define EMU_TEST_REG_VALUES 10
typedef struct {
    int bus;
    int src;      /* broadcast / stream: the sending position */
    int dst;      /* stream: the receiving position; misuse: the destination passed */
    int count;    /* stream / broadcast: values sent */
    int only_cpe; /* misuse kernels: the CPE that acts */
    int delay;    /* timing: cycles the sender reports before putting */
    int received[64][EMU_TEST_REG_VALUES]; /* first int lane of each value received */
    double lanes_ok[64];                   /* 1 if every lane matched */
} regcomm_args;

/** bcast_get_kernel: every CPE fills an LDM array with 0xEE; after a barrier, CPE issuer
 *  gets len bytes of src with athread_get(BCAST_MODE, ..., mask, 0, 0) and waits for its
 *  reply; after a second barrier every CPE puts its array to out + id * len (out NULL:
 *  no put).
 *  where: 0 a __thread_local array, 1 an ldm_malloc block of ldm_bytes (the issuer's
 *  issuer_ldm_bytes), 2 a local array of the kernel. */
#define EMU_TEST_BCAST_MAX 512
typedef struct {
    const unsigned char *src;
    unsigned char *out;
    int len, mask, issuer, where;
    int ldm_bytes, issuer_ldm_bytes;
    int pe; /* timing comparisons: 1 the issuer, 2 every CPE, gets in PE_MODE instead */
    int reply_seen[64];
} bcast_args;

#ifdef __cplusplus
}
#endif

#endif
