/** \file
 * The CPE (slave) code generator: prints every kernel of a function as plain C99 that uses
 * only the athread API (`slave.h`), so that it builds unchanged with `sw5cc -slave`.
 *
 * Each kernel copies its argument struct into LDM by DMA, then takes the block iterations
 * cyclically by `athread_get_id(-1)`; LDM buffers come from `ldm_malloc`/`ldm_free` with
 * their constant bounds, and DMA sites print as athread_get/athread_put with a reply word
 * per site and a wait for all its requests. The only emulator-specific lines rename the
 * kernel to the `slave_` symbol that the real slave compiler produces by itself, under
 * `#ifdef ATHREAD_EMULATOR`.
 */
#ifndef SW_CODEGEN_CPE_H
#define SW_CODEGEN_CPE_H

#include "target_sw/SwModule.h"

#include <string>

namespace sw {

/** The C99 source of all CPE kernels of \p f; it includes \p args_header. */
std::string generate_cpe_source(const SwFunction &f, const std::string &args_header);

/** The header that declares each kernel's argument struct, shared by MPE and CPE code. */
std::string generate_args_header(const SwFunction &f);

/** C name of a closure argument's struct field (shared by both code generators). */
std::string closure_field(const ClosureArg &a);

} // namespace sw

#endif
