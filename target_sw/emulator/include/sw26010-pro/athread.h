/** \file
 * MPE (host) side of the SW26010-Pro's athread API, as implemented by the athread emulator.
 *
 * Mirrors the Pro SDK's <athread.h> for what the project's host code uses
 * (shared/sunway/SW26010-Pro.md, "MPE side"):
 *
 *     extern void SLAVE_FUN(kernel)(void *);   // the CPE function, seen from the host
 *     athread_init(); athread_spawn(kernel, &args); athread_join(); ... athread_halt();
 *
 * On the Pro athread_init also initialises CRTS (CRTS_init) and athread_halt is a no-op (the
 * CPE array stays usable). In C, athread_spawn adds the `slave_` prefix, as on SW26010; in C++
 * the real header does not (C++ callers name slave_kernel themselves); the emulator's C++
 * form adds it, as its SW26010 header does, so that the project's host code is the same for
 * both machines. One core group per process (the project runs one MPI rank per core group);
 * the six-core-group forms (athread_init_cgs, athread_spawn_cgs, athread_join_cgs) are left
 * out, as are athread_spawn_noflush, athread_create / wait / end and the __cross variables.
 * Emulator-only controls are in athread_emu.h (select the machine with
 * athread_emu_set_machine("sw26010-pro")).
 */
#ifndef ATHREAD_EMU_PRO_ATHREAD_H
#define ATHREAD_EMU_PRO_ATHREAD_H

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLAVE_FUN(x) slave_##x

#ifdef __cplusplus
#define athread_spawn(f, arg) __real_athread_spawn(reinterpret_cast<void *>(slave_##f), (arg))
#else
#define athread_spawn(f, arg) __real_athread_spawn(slave_##f, arg)
#endif

/** Starts `fpc` on every CPE of the core group with argument `arg`; returns at once. */
extern int __real_athread_spawn(void *fpc, void *arg);
/** Makes the CPE array usable (and initialises CRTS). */
extern int athread_init(void);
/** Waits until the spawned function has returned on every CPE. */
extern int athread_join(void);
/** A no-op on the Pro. */
extern int athread_halt(void);
/** Number of CPEs in the core group (64). */
extern int athread_get_max_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* ATHREAD_EMU_PRO_ATHREAD_H */
