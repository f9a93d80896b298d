/** \file
 * Pass 8 of the Sunway lowering: proves which floatv4 accesses to the LDM are aligned.
 *
 * An LDM buffer starts on Machine::ldm_alignment bytes (ldm_malloc blocks, PlaceLdmBuffers),
 * so a dense floatv4 load or store at element index base..base+3 is 16-byte aligned when
 * base is a multiple of 4. [U] The real ldm_malloc's alignment is not documented: the
 * generated code asks it for multiples of 128 bytes, public kernels apply simd_load to
 * ldm_malloc'd float arrays, and the emulator (128-byte aligned blocks) stops the run on a
 * misaligned simd_load; a real machine that returned less than 16-byte alignment would
 * fault on the first aligned access. The pass computes the modulus and remainder of each such base
 * (Halide's modulus_remainder, through the enclosing lets; loop variables are any integer)
 * and records it in the access's alignment field. The CPE code generator prints an aligned
 * access as simd_load / simd_store (one P1 instruction) and any other as simd_loadu /
 * simd_storeu (two), and the work counting charges them so (WorkCount.h).
 * Schedules make accesses provably aligned by giving the LDM rows whole vectors
 * (align_storage on the vectorised dimension) and tiles that start on whole vectors.
 */
#ifndef SW_ALIGN_VECTOR_ACCESSES_H
#define SW_ALIGN_VECTOR_ACCESSES_H

#include "target_sw/SwModule.h"

namespace sw {

void align_vector_accesses(CpeKernel &k);

/* What the recorded alignment means (a whole vector or not) is ir::vector_access_aligned
 * (SunwayIR.h). */

} // namespace sw

#endif
