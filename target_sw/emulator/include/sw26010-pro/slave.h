/** \file
 * CPE (slave) side of the SW26010-Pro runtime, as implemented by the athread emulator.
 *
 * Mirrors the Pro SDK's <slave.h> for what CPE code uses (shared/sunway/SW26010-Pro.md;
 * public copies of the Pro SDK's slave.h): the DMA enums (on the Pro: PE_MODE and COL_MODE
 * only; SW26010's BCAST_MODE / ROW_MODE / BROW_MODE / RANK_MODE do not exist, so SW26010
 * broadcast code does not compile here), DMA_OP with ALL_BARRIER, the synchronisation scopes
 * (with PP_SCOPE), athread_syn, the LDM storage classes __thread_local / __thread_local_fix,
 * and the per-CPE variables _CGN, _ROW, _COL, _PEN (core group, mesh row, mesh column, CPE
 * number) that crts.h's CRTS_cgn / CRTS_rid / CRTS_cid / CRTS_tid read. As in the real
 * header everything is inside `#ifdef __sw_slave__` (the Pro's -mslave defines it; build CPE
 * code for the emulator with -D__sw_slave__). ldm_malloc / ldm_free are declared by crts.h
 * (through CRTS_pldm_malloc / CRTS_pldm_free), not here (the real slave.h has them commented
 * out). The CRTS API (DMA with reply counters, RMA, CRTS_ssync_*) is in crts.h.
 * Left out (the project's CPE code does not use them): slave_intc.h / slave_sig.h, the
 * cache and LDM-share controls (set_cache_size, set_ldm_mode_size, flush_slave_cache, ...),
 * float16 helpers, the inline-assembly macros (PRINT, RPCC, RTC, RFPCR/WFPCR, LOG3R,
 * updt_addw, atomic_inc1_w / _l), _PC, _ARG, _MYID, ordered_printf.
 *
 * Emulator semantics: every CPE is a host thread; __thread_local gives each its own copy
 * (counted against the LDM budget through the section ".tdata_local", as on SW26010: on the
 * real Pro the section is ".ldm"); _PEN and friends are set by the emulator when the CPE
 * starts its kernel.
 */
#ifndef ATHREAD_EMU_PRO_SLAVE_H
#define ATHREAD_EMU_PRO_SLAVE_H

#ifdef __sw_slave__

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/** DMA modes of the Pro's DMA builtin: one CPE's own transfer, or a column broadcast. */
typedef enum { PE_MODE, COL_MODE = 2 } dma_mode;

/** DMA operations of the builtin. */
typedef enum { DMA_PUT, DMA_GET, DMA_PUT_P, DMA_GET_P, DMA_BARRIER = 5, ALL_BARRIER = 6 } DMA_OP;

/** Synchronisation scopes of athread_syn. */
typedef enum { ROW_SCOPE, COL_SCOPE, ARRAY_SCOPE, PP_SCOPE } scope;

/** Barrier over a row, a column or the whole CPE array (the emulator: full masks only). */
extern int athread_syn(scope scp, int mask);

/** LDM data: one copy per CPE (emulator: a thread-local variable in ".tdata_local"). */
#define __thread_local __thread __attribute__((section(".tdata_local")))
/** LDM data at a fixed place (the runtime's own variables); the emulator treats it as
 *  __thread_local. */
#define __thread_local_fix __thread __attribute__((section(".tdata_local")))

/** This CPE's core group, mesh row, mesh column and number (_ROW * 8 + _COL). */
extern __thread char _CGN, _ROW, _COL, _PEN;

#ifdef __cplusplus
}
#endif

#endif /* __sw_slave__ */

#endif /* ATHREAD_EMU_PRO_SLAVE_H */
