/** \file
 * The MPE (host) code generator: prints the host function of a lowered Sunway function as
 * C99 (which C++ code can call), plus its public header.
 *
 * The host function takes `halide_buffer_t` arguments as a Halide AOT function does,
 * checks them against what the function was generated for (every Halide assertion
 * becomes a clear message on stderr and a non-zero return), reads buffer fields, packs
 * each kernel's closure into its argument struct and launches the kernel on the 64 CPEs
 * with athread_spawn + athread_join. Emulator builds also name the kernel and register
 * the main-memory buffers it may touch, for the emulator's DMA bounds checks; those lines
 * sit under `#ifdef ATHREAD_EMULATOR`.
 *
 * The first call of any generated function calls athread_init() (a flag shared through
 * a weak symbol); the program calls athread_halt(). Every call selects the machine it
 * was generated for on the emulator and checks its CPE count on the real one. When every
 * buffer is float32 of a fixed dense shape, <fn>_f32 takes plain arrays (ArgumentShapes.h).
 */
#ifndef SW_CODEGEN_MPE_H
#define SW_CODEGEN_MPE_H

#include "target_sw/SwModule.h"

#include <string>

namespace sw {

/** The C source of the host function; includes \p header and \p args_header. */
std::string generate_mpe_source(const SwFunction &f, const std::string &header,
                                const std::string &args_header);

/** The public header: the C signature of the function, each argument's shape, layout and
 *  type, the machine, athread ownership, and the plain-float entry point if there is one. */
std::string generate_header(const SwFunction &f);

} // namespace sw

#endif
