/** \file
 * MPE (host) side of the SW26010-Pro's athread API, as implemented by the athread emulator.
 *
 * Mirrors the Pro SDK's <athread.h> for what the project's host code uses
 * (shared/sunway/SW26010-Pro.md, "MPE side"):
 *
 *     extern void SLAVE_FUN(kernel)(void *);   // the CPE function, seen from the host
 *     athread_init(); athread_spawn(kernel, &args); athread_join(); ... athread_halt();
 *
 * As in the real header everything is inside `#ifdef __sw_host__` (swgcc -mhost defines it:
 * build MPE code for the emulator with -D__sw_host__). Differences from SW26010's athread.h:
 *  - __real_athread_spawn takes a third argument, whether to flush the CPEs' data cache
 *    first; athread_spawn(f, arg) passes 1 (athread_spawn_noflush 0). In C athread_spawn adds
 *    the `slave_` prefix; in C++ it does not (C++ callers name slave_kernel themselves).
 *  - athread_halt() is a macro doing nothing (the CPE array stays usable).
 *  - athread_init also initialises CRTS.
 * Emulator detail: the emulator serves both machines from one library, whose
 * __real_athread_spawn is SW26010's (two arguments), so this header renames the Pro's to
 * athread_emu_real_athread_spawn_flush with a macro; code that calls __real_athread_spawn
 * with three arguments, as Pro code does, compiles and runs unchanged. (The emulator has no
 * data cache: the flush flag is ignored.) The C++ form also converts the function to void *
 * (the real one needs the caller to cast).
 * One core group per process (the project runs one MPI rank per core group): the
 * six-core-group forms (athread_init_cgs, athread_spawn_cgs, athread_join_cgs), the 64-bit
 * spawns, athread_create / wait / end, the resource (athread_res_*) and cross-memory
 * functions are left out.
 * Emulator-only controls are in athread_emu.h (select the machine with
 * athread_emu_set_machine("sw26010-pro")).
 */
#ifndef ATHREAD_EMU_PRO_ATHREAD_H
#define ATHREAD_EMU_PRO_ATHREAD_H

#ifdef __sw_host__

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLAVE_FUN(x) slave_##x

/* The Pro's three-argument spawn under the emulator's name (see the file comment). */
#define __real_athread_spawn athread_emu_real_athread_spawn_flush
/** Starts `func` on every CPE of the core group with argument `arg` (after flushing the CPEs'
 *  data cache if flush_slave_dcache); returns at once. Use athread_spawn. */
int __real_athread_spawn(void *func, void *arg, int flush_slave_dcache);
/** Makes the CPE array usable (and initialises CRTS). */
int athread_init(void);
/** Waits until the spawned function has returned on every CPE. */
int athread_join(void);
/** Number of CPEs in the core group (64). */
int athread_get_max_threads(void);

#ifdef __cplusplus
#define athread_spawn(y, z) __real_athread_spawn(reinterpret_cast<void *>(y), (void *)(z), 1)
#define athread_spawn_noflush(y, z)                                                                \
    __real_athread_spawn(reinterpret_cast<void *>(y), (void *)(z), 0)
#else
#define athread_spawn(y, z) __real_athread_spawn((void *)slave_##y, (void *)(z), 1)
#define athread_spawn_noflush(y, z) __real_athread_spawn((void *)slave_##y, (void *)(z), 0)
#endif

/** Nothing to do on the Pro. */
#define athread_halt()                                                                             \
    do {                                                                                           \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* __sw_host__ */

#endif /* ATHREAD_EMU_PRO_ATHREAD_H */
