/** \file
 * The SW26010-Pro's CRTS runtime (MPE and CPE sides), as implemented by the athread emulator.
 *
 * Mirrors the Pro SDK's <crts.h> for what the project's code uses (shared/sunway/
 * SW26010-Pro.md; public copies of the Pro SDK's crts.h): the names, the parameter order and
 * the reply type are the real ones; most of them are macros there too (statement expressions
 * that return 0, so Pro code is GNU C: build it with -std=gnu99). As in the real header the
 * side is chosen by __sw_host__ (MPE code, -mhost) or __sw_slave__ (CPE code, -mslave):
 * build emulated code with -D__sw_host__ or -D__sw_slave__.
 *
 * CPE side (__sw_slave__), with slave.h:
 *   ids          CRTS_tid (0..63, = _PEN), CRTS_rid / CRTS_cid (mesh row / column 0..7),
 *                CRTS_cgn; athread_get_id(-1) (a macro on the Pro)
 *   LDM          CRTS_MAX_LDM_SIZE; CRTS_pldm_malloc / CRTS_pldm_free, macros naming
 *                ldm_malloc / ldm_free, which this header therefore declares
 *   replies      crts_rply_t (volatile int on the CPE, volatile long on the MPE); every
 *                asynchronous request adds 1 to its reply word when it completes;
 *                CRTS_dma_wait_value(&r, n) / CRTS_rma_wait_value(&r, n) wait until r >= n
 *   DMA          destination first: CRTS_dma_iget(ldm, mem, len, &r), CRTS_dma_iput(mem, ldm,
 *                len, &r), CRTS_dma_iget_stride / iput_stride(dst, src, len, bsize, stride, &r)
 *                (len bytes in all, bsize bytes per main-memory block, stride = the GAP in bytes
 *                between blocks), the blocking CRTS_dma_get / put / get_stride / put_stride;
 *                CRTS_dma_col_ibcast(ldm, mem, len, &r): hardware column broadcast, the bytes
 *                land at the same LDM address of every CPE of the issuer's column, only the
 *                issuer's reply counts it; CRTS_dma_row_ibcast(ldm, mem, len, &r): a blocking
 *                get by the issuer, then an RMA row broadcast whose remote reply is r; the old
 *                athread_get(mode, mem, ldm, len, &r, mask, stride, bsize) / athread_put(mode,
 *                ldm, mem, len, &r, stride, bsize) with PE_MODE or COL_MODE, macros on the Pro
 *   RMA          LDM to LDM within the core group: CRTS_rma_iget(l_addr, &l_r, len, r_tid,
 *                r_addr, &r_r) (r_tid's r_addr -> own l_addr), CRTS_rma_iput (own l_addr ->
 *                r_tid's r_addr), CRTS_rma_row_ibcast(dst, src, len, &l_r, &r_r) (own src ->
 *                dst of every CPE of the issuer's mesh row, the issuer included),
 *                CRTS_rma_col_ibcast (the issuer's column), *_ibcast_other (the issuer
 *                excluded), CRTS_rma_row_imcast_other / col_imcast_other(dst, src, len, &l_r,
 *                mask, &r_r) (the CPEs of the mesh rows / columns in mask, the issuer excluded).
 * l_r is the issuer's reply (its side done); r_r is an LDM address meaning the same place on the
 * remote CPEs: each remote's word there gets 1 when its data has arrived (for iget: when its data
 * has been read). Addresses must be LDM, 4-byte aligned, len a multiple of 4 [V] SW26010-Pro.md;
 * synchronise (CRTS_ssync_*) before issuing into another CPE's buffer. sync, time
 * CRTS_ssync_array() / CRTS_ssync_row() / CRTS_ssync_col(); CRTS_stime_cycle() (CPE cycles at 2.25
 * GHz) MPE side (__sw_host__), with athread.h: crts_rply_t, CRTS_init(), CRTS_time_cycle() (MPE
 * cycles at 2.1 GHz).
 *
 * Whether the issuer of a row / column RMA broadcast receives its own data: the real header's
 * comment says it does for bcast; its mode names say so too (RMA_MODE_ROW_BCAST_LOCAL_
 * RECEIVE_DATA for *_bcast, RMA_MODE_ROW_BCAST for *_other); the emulator follows the modes.
 *
 * Left out (the project's code does not use them): the collective forms (*_coll), the
 * other multicasts (*_imcast with the issuer receiving, *_mcast), CRTS_rma_ibcast / CRTS_dma_ibcast
 * (whole array), the physical-address DMA (CRTS_dma_phy_*), DMA / RMA barriers, the scoll / smutex
 * / ssig families, the other ssync scopes (16spe, 2spc, ...), shared LDM (sldm), the host's
 * mutexes, CRTS_athread_* aliases and the CRTS_Proc_info / CRTS_Thrd_info structures.
 *
 * Emulator semantics: a request copies at once (checked as in slave.h's SW26010 emulation:
 * LDM side inside one LDM object, main memory inside the registered buffers), then adds 1
 * to its reply word(s); a wait on a reply word that other CPEs count (RMA) blocks the CPE
 * thread until the count is reached (a wait that can never end, every CPE blocked, is a
 * deadlock error). The timing model (athread_emu.h) replays DMA through the shared channel
 * and RMA with the [U] costs of Machine.h's Rma.
 */
#ifndef ATHREAD_EMU_PRO_CRTS_H
#define ATHREAD_EMU_PRO_CRTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if !defined(__sw_host__) && !defined(__sw_slave__)
#error                                                                                             \
    "crts.h (SW26010-Pro): build CPE code with -D__sw_slave__ (the real -mslave defines it) or MPE code with -D__sw_host__ (-mhost)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The emulator's implementation of the macros below (not part of the real API). */
int athread_emu_crts_dma(int mode, int op, void *mem, void *ldm, int len, void *reply, int mask,
                         int stride, int bsize);
int athread_emu_crts_rma(int r_tid, void *l_addr, void *r_addr, int len, void *l_reply,
                         void *r_reply, int mode, int opcode, int mask);
int athread_emu_crts_wait(volatile void *reply, long value);
int athread_emu_crts_ssync(int scope);
unsigned long athread_emu_crts_stime_cycle(void);
unsigned long athread_emu_crts_time_cycle(void);

#define CRTS_MAX_MPE_NUM 6
#define CRTS_MAX_SPE_NUM 64

#ifdef __sw_host__
/* ---------------------------------------------------------------- MPE side */
#include <athread.h>

typedef volatile long crts_rply_t;

/** Initialises the runtime (athread_init calls it too on the Pro). */
int CRTS_init(void);
/** MPE cycle counter (2.1 GHz). Emulator: the modelled time of the kernels joined so far. */
#define CRTS_time_cycle() (athread_emu_crts_time_cycle())

#elif defined __sw_slave__
/* ---------------------------------------------------------------- CPE side */
#include <slave.h>

typedef volatile int crts_rply_t;

#define CRTS_tid (_PEN)
#define CRTS_rid (_ROW)
#define CRTS_cid (_COL)
#define CRTS_cgn (_CGN)
#define CRTS_CGN (_CGN)
#define athread_get_id(core) ((core) == -1 ? (int)_PEN : (core))

#define CRTS_MAX_LDM_SIZE (256 << 10)
#define CRTS_pldm_malloc ldm_malloc
#define CRTS_pldm_free ldm_free
void *CRTS_pldm_malloc(size_t size);
void CRTS_pldm_free(void *addr, size_t size);

#define CRTS_stime_cycle() (athread_emu_crts_stime_cycle())

#define CRTS_ssync_array() ({ athread_emu_crts_ssync(ARRAY_SCOPE); })
#define CRTS_ssync_row() ({ athread_emu_crts_ssync(ROW_SCOPE); })
#define CRTS_ssync_col() ({ athread_emu_crts_ssync(COL_SCOPE); })

/* ---- DMA: the builtin's argument order is (mode, op, mem, ldm, len, reply, mask, stride,
 * bsize); the CRTS macros put the destination first. */
#define CRTS_dma_iget(dest, src, len, reply)                                                       \
    ({ athread_emu_crts_dma(PE_MODE, DMA_GET, (src), (dest), (len), (void *)(reply), 0, 0, 0); })
#define CRTS_dma_iget_stride(dest, src, len, bsize, stride, reply)                                 \
    ({                                                                                             \
        athread_emu_crts_dma(PE_MODE, DMA_GET, (src), (dest), (len), (void *)(reply), 0, (stride), \
                             (bsize));                                                             \
    })
#define CRTS_dma_iput(dest, src, len, reply)                                                       \
    ({ athread_emu_crts_dma(PE_MODE, DMA_PUT, (dest), (src), (len), (void *)(reply), 0, 0, 0); })
#define CRTS_dma_iput_stride(dest, src, len, bsize, stride, reply)                                 \
    ({                                                                                             \
        athread_emu_crts_dma(PE_MODE, DMA_PUT, (dest), (src), (len), (void *)(reply), 0, (stride), \
                             (bsize));                                                             \
    })
#define CRTS_dma_get(dest, src, len)                                                               \
    ({                                                                                             \
        crts_rply_t athread_emu_r_ = 0;                                                            \
        athread_emu_crts_dma(PE_MODE, DMA_GET, (src), (dest), (len), (void *)&athread_emu_r_, 0,   \
                             0, 0);                                                                \
        athread_emu_crts_wait(&athread_emu_r_, 1);                                                 \
    })
#define CRTS_dma_get_stride(dest, src, len, bsize, stride)                                         \
    ({                                                                                             \
        crts_rply_t athread_emu_r_ = 0;                                                            \
        athread_emu_crts_dma(PE_MODE, DMA_GET, (src), (dest), (len), (void *)&athread_emu_r_, 0,   \
                             (stride), (bsize));                                                   \
        athread_emu_crts_wait(&athread_emu_r_, 1);                                                 \
    })
#define CRTS_dma_put(dest, src, len)                                                               \
    ({                                                                                             \
        crts_rply_t athread_emu_r_ = 0;                                                            \
        athread_emu_crts_dma(PE_MODE, DMA_PUT, (dest), (src), (len), (void *)&athread_emu_r_, 0,   \
                             0, 0);                                                                \
        athread_emu_crts_wait(&athread_emu_r_, 1);                                                 \
    })
#define CRTS_dma_put_stride(dest, src, len, bsize, stride)                                         \
    ({                                                                                             \
        crts_rply_t athread_emu_r_ = 0;                                                            \
        athread_emu_crts_dma(PE_MODE, DMA_PUT, (dest), (src), (len), (void *)&athread_emu_r_, 0,   \
                             (stride), (bsize));                                                   \
        athread_emu_crts_wait(&athread_emu_r_, 1);                                                 \
    })
#define CRTS_dma_col_ibcast(dest, src, len, reply)                                                 \
    ({                                                                                             \
        athread_emu_crts_dma(COL_MODE, DMA_GET, (src), (dest), (len), (void *)(reply),             \
                             1 << CRTS_cid, 0, 0);                                                 \
    })
#define CRTS_dma_col_ibcast_stride(dest, src, len, bsize, stride, reply)                           \
    ({                                                                                             \
        athread_emu_crts_dma(COL_MODE, DMA_GET, (src), (dest), (len), (void *)(reply),             \
                             1 << CRTS_cid, (stride), (bsize));                                    \
    })
#define CRTS_dma_wait_value(reply, value) ({ athread_emu_crts_wait((reply), (value)); })

/* The SW26010 names, as macros over the same builtin (SW26010's argument order). */
#define athread_get(mode, src, dest, len, reply, mask, stride, bsize)                              \
    ({                                                                                             \
        athread_emu_crts_dma((mode), DMA_GET, (src), (dest), (len), (void *)(reply), (mask),       \
                             (stride), (bsize));                                                   \
    })
#define athread_put(mode, src, dest, len, reply, stride, bsize)                                    \
    ({                                                                                             \
        athread_emu_crts_dma(PE_MODE, DMA_PUT, (dest), (src), (len), (void *)(reply), 0, (stride), \
                             (bsize));                                                             \
    })

/* ---- RMA */
#define RMA_MODE_SINGLE_CORE 0ULL
#define RMA_MODE_ROW_BCAST 1ULL
#define RMA_MODE_COL_BCAST 2ULL
#define RMA_MODE_ROW_BCAST_LOCAL_RECEIVE_DATA 5ULL
#define RMA_MODE_COL_BCAST_LOCAL_RECEIVE_DATA 6ULL
#define RMA_OPCODE_PUT 0ULL
#define RMA_OPCODE_GET 1ULL

#define CRTS_rma_iget(l_addr, l_rply, len, r_tid, r_addr, r_rply)                                  \
    ({                                                                                             \
        athread_emu_crts_rma((r_tid), (l_addr), (r_addr), (len), (void *)(l_rply),                 \
                             (void *)(r_rply), RMA_MODE_SINGLE_CORE, RMA_OPCODE_GET, 0);           \
    })
#define CRTS_rma_iput(l_addr, l_rply, len, r_tid, r_addr, r_rply)                                  \
    ({                                                                                             \
        athread_emu_crts_rma((r_tid), (l_addr), (r_addr), (len), (void *)(l_rply),                 \
                             (void *)(r_rply), RMA_MODE_SINGLE_CORE, RMA_OPCODE_PUT, 0);           \
    })
#define CRTS_rma_row_ibcast(dst, src, len, l_rply, r_rply)                                         \
    ({                                                                                             \
        athread_emu_crts_rma(CRTS_tid, (src), (dst), (len), (void *)(l_rply), (void *)(r_rply),    \
                             RMA_MODE_ROW_BCAST_LOCAL_RECEIVE_DATA, RMA_OPCODE_PUT,                \
                             1 << CRTS_rid);                                                       \
    })
#define CRTS_rma_col_ibcast(dst, src, len, l_rply, r_rply)                                         \
    ({                                                                                             \
        athread_emu_crts_rma(CRTS_tid, (src), (dst), (len), (void *)(l_rply), (void *)(r_rply),    \
                             RMA_MODE_COL_BCAST_LOCAL_RECEIVE_DATA, RMA_OPCODE_PUT,                \
                             1 << CRTS_cid);                                                       \
    })
#define CRTS_rma_row_ibcast_other(dst, src, len, l_rply, r_rply)                                   \
    ({                                                                                             \
        athread_emu_crts_rma(CRTS_tid, (src), (dst), (len), (void *)(l_rply), (void *)(r_rply),    \
                             RMA_MODE_ROW_BCAST, RMA_OPCODE_PUT, 1 << CRTS_rid);                   \
    })
#define CRTS_rma_col_ibcast_other(dst, src, len, l_rply, r_rply)                                   \
    ({                                                                                             \
        athread_emu_crts_rma(CRTS_tid, (src), (dst), (len), (void *)(l_rply), (void *)(r_rply),    \
                             RMA_MODE_COL_BCAST, RMA_OPCODE_PUT, 1 << CRTS_cid);                   \
    })
#define CRTS_rma_row_imcast_other(dst, src, len, l_rply, r_rows_mask, r_rply)                      \
    ({                                                                                             \
        athread_emu_crts_rma(CRTS_tid, (src), (dst), (len), (void *)(l_rply), (void *)(r_rply),    \
                             RMA_MODE_ROW_BCAST, RMA_OPCODE_PUT, (r_rows_mask));                   \
    })
#define CRTS_rma_col_imcast_other(dst, src, len, l_rply, r_cols_mask, r_rply)                      \
    ({                                                                                             \
        athread_emu_crts_rma(CRTS_tid, (src), (dst), (len), (void *)(l_rply), (void *)(r_rply),    \
                             RMA_MODE_COL_BCAST, RMA_OPCODE_PUT, (r_cols_mask));                   \
    })
#define CRTS_rma_wait_value(rply, value) ({ athread_emu_crts_wait((rply), (value)); })

/* A blocking get by the issuer, then an RMA broadcast to its row whose remote reply is
 * `reply` (the real header's composition). */
#define CRTS_dma_row_ibcast(dest, src, len, reply)                                                 \
    ({                                                                                             \
        crts_rply_t athread_emu_l_ = 0;                                                            \
        CRTS_dma_get((dest), (src), (len));                                                        \
        athread_emu_crts_rma(CRTS_tid, (dest), (dest), (len), (void *)&athread_emu_l_,             \
                             (void *)(reply), RMA_MODE_ROW_BCAST_LOCAL_RECEIVE_DATA,               \
                             RMA_OPCODE_PUT, 1 << CRTS_rid);                                       \
    })

#endif /* __sw_slave__ */

#ifdef __cplusplus
}
#endif

#endif /* ATHREAD_EMU_PRO_CRTS_H */
