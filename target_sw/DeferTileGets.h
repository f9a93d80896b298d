/** \file
 * Pass 5b of the Sunway lowering (after DelayDmaWaits): a tile's get that is needed only after
 * a double-buffered loop is issued inside that loop, right after the loop's last prefetch.
 *
 * Why: a CPE's DMA engine serves its requests in order (the timing model, timing-model.md).
 * A get issued at the top of a tile and first used after the tile's chunk loop (a fused
 * residual add's tile of the residual) sits in the engine ahead of the loop's first chunks:
 * in a broadcast kernel the first chunk's pieces, issued by CPEs 0-7 behind their own residual
 * get, reach every CPE only once 64 residual tiles have crossed the channel, and no CPE
 * computes meanwhile. Issued after the last prefetch, the get is behind every chunk transfer
 * and moves while the last two chunks are computed.
 *
 * The rule, per statement M of a block that only issues gets (an sw_dma_begin and the
 * sw_dma_requests of its site, through lets, producer/consumer marks, loops of requests (one
 * per row of a box whose LDM rows are padded), a guard without else (a CPE with a block of
 * the round) and no-ops; its wait is elsewhere) into LDM buffer B, from main buffer S:
 *  - the statements after M, in program order and through allocations, lets and
 *    producer/consumer marks, are scanned up to the first serial loop L whose body issues,
 *    at its top level (through guards and loops that only issue requests, such as a mesh
 *    row's source fetching its staging channel by channel; not in a nested loop of work), a
 *    get of a site also issued between M and L (DoubleBuffer's and BroadcastDma's prologue and
 *    prefetch), of constant extent >= 2;
 *  - nothing from M to the end of L reads, writes, frees or transfers B, or writes S (a store
 *    or a put into it);
 *  - then M moves into L's body, after the last top-level statement that issues a request,
 *    under `if (i == min + extent - 2)` (the iteration that issues the last prefetch).
 * Where no such loop follows, M stays where it is. Correct either way: M still precedes its
 * wait in program order, and B is untouched until then.
 */
#ifndef SW_DEFER_TILE_GETS_H
#define SW_DEFER_TILE_GETS_H

#include "target_sw/SwModule.h"

namespace sw {

void defer_tile_gets(CpeKernel &k);

} // namespace sw

#endif
