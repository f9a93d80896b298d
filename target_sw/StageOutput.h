/** \file
 * Pass 1b of the Sunway lowering (before PlaceLdmBuffers): staging an output through the
 * LDM, the schedule directive `sw::stage_output(f)` for an output Func that computes its
 * values itself inside a CPE kernel (e.g. `out(x, y, c) = a(x, y, c) + b(x, y, c)` with the
 * inputs staged in LDM): without it, each CPE stores every element of its tile directly
 * into main memory (a direct main-memory access per element, very slow on a CPE).
 *
 * The rule, per CPE kernel and per outermost loop nest of the kernel body that stores into
 * the marked output (the producer nest of the tile):
 *  - every store into the output must sit in the innermost body of the same chain of loops
 *    L0 (outer) .. Ln-1 (inner), with no branch on the way, a true predicate, and a scalar
 *    or dense-vector (Ramp) index affine in the loop variables; the loops' mins and extents
 *    must not depend on the nest's variables (a box; extents may be symbolic, e.g. per block:
 *    PlaceLdmBuffers bounds them per block), and the nest must not read the output back;
 *  - the nest then stores into a new LDM allocation `<output>$ldm` around it, of
 *    S x E0 x .. x En-1 x L elements (S stores in the body, e.g. unrolled; L vector lanes):
 *    store s writes local index s*T + lin(v)*L (+ lane), lin(v) = row-major position of the
 *    loop variables' offsets from their mins;
 *  - after the nest, one copy nest per store, over the same loops (plus a lane loop for
 *    vector stores): output[original index] = staged[local index], which InjectDma turns
 *    into DMA puts (one strided request per tile when the tile is a box of rows).
 * Edge tiles clamped by Halide (ShiftInwards: the loop base is clamped, the extent stays)
 * are handled as any other tile. Where the rule does not hold, the nest is left as it was
 * (direct stores, correct) and the kernel's report notes say why.
 */
#ifndef SW_STAGE_OUTPUT_H
#define SW_STAGE_OUTPUT_H

#include "Halide.h"
#include "target_sw/Directives.h"
#include "target_sw/SwModule.h"

#include <set>
#include <string>

namespace sw {

/* The schedule directive sw::stage_output(f) (compute each CPE tile of the output Func f
 * into an LDM buffer and write it back by DMA) is declared in Directives.h. */

/** Stages the outputs named in \p marked (Directives::staged_outputs) that \p k writes
 * (see the file comment). */
void stage_outputs(CpeKernel &k, const std::set<std::string> &marked);

} // namespace sw

#endif
