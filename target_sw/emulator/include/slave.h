/** \file
 * CPE (slave) side of the athread API, as implemented by the athread emulator.
 *
 * Mirrors sw5cc's <slave.h>: everything declared here is declared the same way there
 * (the DMA enums dma_mode / DMA_OP / scope, athread_get / athread_put, athread_get_id,
 * athread_syn, the __thread_local storage class; see shared/sunway/athread-api.md), and
 * like the real header it includes <signal.h>. Nothing else is declared, so code that
 * compiles against this header does not depend on a name the real one lacks.
 * In particular ldm_malloc / ldm_free are NOT declared: they are in the CPE runtime
 * library (and in the emulator), but the installed slave.h does not declare them; code
 * that calls them declares them itself, with the sizes as size_t (<stddef.h>):
 *     void *ldm_malloc(size_t size);
 *     void ldm_free(void *p, size_t size);
 * Left out (not used by the project's CPE code): athread_get_core, the RPCC / RTC cycle
 * counters, PRINT, updt_addw / updt_subw, atomic_inc1_w / atomic_inc1_l (inline
 * assembly), the per-CPE variables _CGN _ROW _COL _PEN _PC _MYID, __thread_local_fix,
 * __thread_mix, and what slave.h pulls from share.h / slave_intc.h / slave_sig.h.
 * Valid C99 (the slave compiler takes C only); usable from C++ as well.
 *
 * Emulator semantics (see athread_emu.h for the details and the checks):
 *  - every CPE of the core group is a host thread; athread_get_id(-1) is its id;
 *  - DMA calls copy synchronously, then add 1 to the reply word;
 *  - __thread_local gives every CPE thread its own copy of the variable; the emulator
 *    counts the bytes of all __thread_local variables of the kernel's module against
 *    the LDM budget (it finds them through their section, ".tdata_local").
 */
#ifndef ATHREAD_EMU_SLAVE_H
#define ATHREAD_EMU_SLAVE_H

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/** DMA modes. The emulator implements PE_MODE only. */
typedef enum { PE_MODE, BCAST_MODE, ROW_MODE, BROW_MODE, RANK_MODE } dma_mode;

/** DMA operations of the descriptor interface (dma.h); listed for completeness. */
typedef enum { DMA_PUT, DMA_GET, DMA_PUT_P, DMA_GET_P, DMA_BARRIER = 5 } DMA_OP;

/** Synchronisation scopes of athread_syn: a mesh row, a mesh column, the whole array. */
typedef enum { ROW_SCOPE, COL_SCOPE, ARRAY_SCOPE } scope;

/** Main memory `src` -> LDM `dest`: `len` bytes in total. Main memory is read as blocks
 *  of `bsize` bytes separated by gaps of `stride` bytes (bsize == 0: one block). The LDM
 *  side is contiguous. Adds 1 to *(int *)reply when done. `mask` is for BCAST/BROW. */
extern int athread_get(dma_mode mode, void *src, void *dest, int len, void *reply, char mask,
                       int stride, int bsize);
/** LDM `src` -> main memory `dest`; same block/gap rules as athread_get. */
extern int athread_put(dma_mode mode, void *src, void *dest, int len, void *reply, int stride,
                       int bsize);
/** athread_get_id(-1): this CPE's id, 0 .. 63 (row = id >> 3, column = id & 7). */
extern int athread_get_id(int core);
/** Barrier over a row, a column or the whole CPE array. */
extern int athread_syn(scope scp, int mask);

/** A variable in LDM: one copy per CPE (the real header's definition for compilers other
 *  than sw5cc's own; sw5cc drops the __thread). */
#define __thread_local __thread __attribute__((section(".tdata_local")))

#ifdef __cplusplus
}
#endif

#endif /* ATHREAD_EMU_SLAVE_H */
