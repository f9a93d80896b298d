/** \file
 * Pass 4 of the Sunway lowering: double buffering, the schedule directive
 * `sw::double_buffer(f)` for a Func staged in LDM inside a serial loop (e.g.
 * `w.in().compute_at(conv, rco).store_in(sw::LDM)` and `sw::double_buffer(w.in())`).
 *
 * The buffer's allocation moves out of the loop with two slots; before the loop the first
 * iteration's transfer is issued into slot 0; at the top of iteration i the transfer of
 * iteration i+1 is issued into the other slot, then iteration i waits for its own slot,
 * so each tile arrives while the previous one is computed. Each slot has its own reply
 * word. Every other access to the buffer in the loop body, loads, stores and DMA transfers
 * alike (a put straight from the staged tile, as an edge tile whose output is not staged
 * makes), goes to the iteration's slot. The two slots count in the LDM budget
 * (PlaceLdmBuffers runs again after this pass).
 *
 * The pass applies when the staged buffer is produced by exactly one DMA site inside a serial
 * loop, reached from the loop body through lets and allocations only; otherwise the buffer
 * stays single-buffered and the kernel's report says why.
 */
#ifndef SW_DOUBLE_BUFFER_H
#define SW_DOUBLE_BUFFER_H

#include "Halide.h"
#include "target_sw/Directives.h"
#include "target_sw/SwModule.h"

#include <set>
#include <string>

namespace sw {

/* The schedule directive sw::double_buffer(f) (stage f twice over and prefetch the next
 * tile) is declared in Directives.h. */

/** Applies the double buffering of the LDM buffers of \p k named in \p marked
 * (Directives::double_buffered). */
void apply_double_buffering(CpeKernel &k, const Machine &m, const std::set<std::string> &marked);

} // namespace sw

#endif
