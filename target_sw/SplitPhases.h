/** \file
 * Pass 1c of the Sunway lowering (before PlaceLdmBuffers and InjectDma): the schedule
 * directive `sw::split_phases(f)` for a Func staged in LDM whose consumers read it with
 * vectors of stride S > 1 (the input window of a strided convolution, e.g. AlexNet conv1:
 * output pixel x reads input 4x + tap). Such a vector has no unit-stride load: the CPE code
 * gathers it from S scalars (4 loads and a simd_set_floatv4). Split into its S phases, a
 * row of the staging (P elements: its row pitch) holds element x of the row in plane x mod S
 * at position x / S, and every stride-S vector becomes a unit-stride vector of one plane.
 *
 * The rule, per allocation of a marked Func inside a CPE kernel:
 *  - its consumers' vector loads of it with a constant stride that is a multiple of S (S:
 *    the smallest constant stride > 1 among them) read the phase planes instead: index
 *    i = row x P + x becomes (x mod S) x Q + row x R + x / S (R: the planes' row pitch,
 *    ceil(P / S) rounded up to whole floatv4, so that rows start on 16 bytes; Q: a plane's
 *    size, the rows and a vector of slack past the last). Row, phase and position are found
 *    from the index's affine terms where the enclosing loops' bounds prove them (a tap's
 *    offset is then a constant), else by div and mod. Scalar loads and other vectors read
 *    the buffer as before;
 *  - the copy into the planes runs once per filling of the buffer, at the start of its
 *    consumer, after the buffer's DMA and padding (DelayDmaWaits keeps the wait before the
 *    copy, its first reader): per row and group of S elements, S scalar loads and S stores;
 *    for S = 2 on float32, per group of 8 elements two floatv4 loads, their even and odd
 *    lanes (simd_vshff) and two aligned floatv4 stores (the copy then reads whole groups of
 *    8, the buffer grows by 8 elements);
 *  - the planes are one more LDM buffer, `<f>$phases`, of S x Q elements, allocated with the
 *    buffer (and counted by PlaceLdmBuffers); the buffer's own allocation grows by S elements
 *    (the copy reads whole groups). Under sw::double_buffer the buffer's two slots are
 *    prefetched as before; the planes are filled from the current slot.
 * The buffer's size must have a constant bound and its row pitch be a constant. Where the
 * rule does not hold (no stride > 1 vector load, no constant size), the buffer is left as
 * it was and the kernel's report notes say why.
 */
#ifndef SW_SPLIT_PHASES_H
#define SW_SPLIT_PHASES_H

#include "Halide.h"
#include "target_sw/Directives.h"
#include "target_sw/SwModule.h"

#include <set>
#include <string>

namespace sw {

/* The schedule directive sw::split_phases(f) (keep the LDM staging of f also split into its
 * phases along the stride of its consumers' vector loads) is declared in Directives.h. */

/** Splits the LDM buffers of \p k named in \p marked (Directives::phase_split) into phases
 * (see the file comment). */
void apply_split_phases(CpeKernel &k, const std::set<std::string> &marked);

/** The phase planes of a staging of \p rows rows of \p pitch elements read with stride
 * \p stride: each plane's row pitch (ceil(pitch / stride) in whole floatv4) and size (the rows
 * and a vector of slack); the planes take stride x plane_elements elements. */
struct PhasePlanes {
    int64_t row_pitch, plane_elements;
};
PhasePlanes phase_planes(int64_t pitch, int64_t rows, int stride);

/** Name of the phase planes of LDM buffer \p buffer. */
std::string phase_planes_name(const std::string &buffer);

} // namespace sw

#endif
