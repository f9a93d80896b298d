/** \file
 * Pass of the Sunway lowering: the padding of a zero-padded window written once per LDM slot,
 * not once per chunk.
 *
 * InjectDma brings a padded window's in-bounds box by DMA straight to its place and fills only
 * the elements outside it (the padding), after every transfer; it marks that fill
 * (ir::make_padding_fill) when nothing else of the copy writes outside the box (no compact
 * transfer spread in the LDM afterwards). Across the iterations of the loop around it (a
 * convolution's reduction chunks) the fill writes the same elements with the same value:
 * the box moves only with the tile, and the transfers of the later chunks land in the box
 * again. So a marked fill whose loop's variable it uses only through the LDM slot of a
 * double-buffered staging (the variable modulo 2) moves before that loop, once per slot; one
 * that does not use it at all, once. It stays where it is when it reads anything defined
 * inside the loop, or its buffer is allocated inside it. Only the innermost loop around a fill
 * is considered. Every mark is removed.
 *
 * A 3x3 convolution on a 14x14 map staged as a whole padded window (16 x 18 per channel) fills
 * about 230 elements and row heads per channel and chunk; its compute is about 2,000 cycles
 * per channel and chunk (docs/kernels.md).
 */
#ifndef SW_HOIST_PADDING_FILL_H
#define SW_HOIST_PADDING_FILL_H

#include "target_sw/SwModule.h"

namespace sw {

void hoist_padding_fill(CpeKernel &k);

} // namespace sw

#endif
