/** \file
 * Pass 5c of the Sunway lowering (after DeferTileGets): a tile's put spread over the next
 * tile's chunk loop, the output tile staged in two slots.
 *
 * Why: with pixel tiles in turn (a serial loop P over a CPE's tiles, each with a double-buffered
 * chunk loop L), the CPEs run in step and put their tiles at the same moment; each waited for
 * its put before the next tile, so the channel moved only puts while no CPE computed (ResNet-50's
 * 1x1 convs on 56x56: 18 of 33 us per tile), and it moved little while they computed. A CPE's
 * DMA engine serves its requests in order, so a whole put issued at the top of the next tile
 * would hold up that tile's chunk transfers (the broadcast pieces of CPEs 0-7 and every CPE's
 * weights) for as long. In pieces, one after each chunk's prefetch, each piece is behind one
 * chunk's transfer and ahead of the next, and the puts move while the CPEs compute.
 *
 * The rule: a serial loop P of constant bounds, >= 2 iterations, whose body holds (through
 * allocations, lets, producer/consumer marks and blocks) the allocation of an LDM buffer O of
 * constant size and, in it, one put of O (a begin and one request of its site, or a begin and
 * a serial loop of constant bounds around that request (a tile's channel planes, each a
 * request of its rows), its rows, block and pitch constant, every value it reads bound outside
 * P or P's own variable (or its loop's)) after a
 * double-buffered loop L (constant extent C >= 2, a get at its top level of a site also issued
 * before it; inside O's allocation or before it: an rfactor plan's final tile is allocated
 * after its chunk loop), O not filled by DMA, and room in the LDM for a second slot of O. Then:
 *  - O is allocated around P with two slots; tile p uses slot (p - min) % 2; the slot's put
 *    (two sites, one per slot) is waited for at the top of tile p + 2 and after P;
 *  - in iteration k of L in tile p > min, after the last top-level statement that issues a
 *    request, tile p - 1's blocks [ceil(k R / C), ceil((k + 1) R / C)) are put (R blocks, or
 *    with a loop of requests its R iterations, each request whole; none
 *    when the range is empty, so with R < C the first iterations put one each and the last,
 *    whose piece the next tile's first chunk follows, the fewest; the site begun at k = 0);
 *  - after P, the last tile's put whole.
 * (A put of one block, a tile of whole rows merged, may record a row pitch below its block;
 * its pieces, whose number of rows is no longer the constant 1, take the block as their pitch,
 * so that the printed stride is 0 and never negative.)
 * Tiles in turn without a chunk loop (DoubleBuffer's prefetched tiles: P's body issues at its
 * top level a get of a site also issued before P, the next tile's stagings): the same two
 * slots and the same waits (slot s at the top of tile p + 2 and after P), the put whole where
 * it was issued, after the tile's compute and behind the next tile's prefetch in the engine,
 * so that it moves while the next tile computes (MobileNetV2's 16 -> 96 expansion, 4 tiles of
 * 224 x 24 per CPE in turn, each put waited for before the next tile: the channel idle while
 * the CPEs computed).
 * Elsewhere the kernel is left as it was (the put waited for at the end of each tile).
 */
#ifndef SW_PIPELINE_TILE_PUTS_H
#define SW_PIPELINE_TILE_PUTS_H

#include "target_sw/Machine.h"
#include "target_sw/SwModule.h"

#include <optional>
#include <string>

namespace sw {

void pipeline_tile_puts(CpeKernel &k, const Machine &m);

/** The rule above applied to the one loop \p tiles of \p k's body (k.body holds it): the
 * loop rewritten, with the output buffer's two slots allocated around it and the last tile's
 * put after it, its second put site added to k.dma and the buffer's name in \p buffer; or
 * nothing where the rule does not hold (k as it was, but for a note). PipelineRoundPuts.h
 * applies it to a kernel's rounds of blocks. */
std::optional<Halide::Internal::Stmt> pipeline_loop_puts(CpeKernel &k, const Machine &m,
                                                         const Halide::Internal::For *tiles,
                                                         std::string &buffer);

} // namespace sw

#endif
