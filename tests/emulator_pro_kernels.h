/** \file
 * Argument structs shared by the hand-written SW26010-Pro CPE kernels of
 * emulator_pro_kernels.c (GNU C, built against include/sw26010-pro with -D__sw_slave__) and the
 * host tests of emulator_pro_test.cpp.
 */
#ifndef EMULATOR_PRO_KERNELS_H
#define EMULATOR_PRO_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/** pro_axpy_kernel: y[r][c] += alpha * x[r][c] for r < rows (a multiple of 128), c < cols (a
 *  multiple of 8, at most 64); x and y have rows of `pitch` floats. CPE t takes the row pairs
 *  t, t + 64, ... (rows 2p and 2p + 1), fetched with one strided get each (blocks of cols
 *  floats, gaps of pitch - cols), computed with floatv8 multiply-adds. */
typedef struct {
    float *x;
    float *y;
    float alpha;
    int rows, cols, pitch;
} pro_axpy_args;

/** pro_rma_kernel: in each mesh row, the CPE of column `root` fills 16 floats with
 *  row * 100 + i and broadcasts them to its row by RMA; every CPE fills `own` with
 *  tid * 1000 + i, then reads its neighbour's (tid ^ 1) by CRTS_rma_iget. out[tid * 32 + i]:
 *  the broadcast (i < 16), the neighbour's (i >= 16). bcast_reply[tid]: the remote reply word
 *  after the wait. */
typedef struct {
    float *out;
    int root;
    int bcast_reply[64];
} pro_rma_args;

/** pro_colcast_kernel: the CPE of mesh row 0 of each column c broadcasts in[c * 16 .. + 16) to
 *  its column by CRTS_dma_col_ibcast; out[tid * 16 + i] = what each CPE received. */
typedef struct {
    float *in;
    float *out;
} pro_colcast_args;

/** pro_misuse_kernel: CPE `cpe` makes mistake `what`: 1 an RMA from an LDM address that is not
 *  4-byte aligned, 2 an RMA of 6 bytes, 3 a wait for two requests when one was counted. */
typedef struct {
    int cpe, what;
} pro_misuse_args;

#ifdef __cplusplus
}
#endif

#endif
