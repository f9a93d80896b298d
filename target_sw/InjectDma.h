/** \file
 * Pass 3 of the Sunway lowering: turns copies between main memory and LDM into DMA.
 *
 * A copy is a nest of serial loops (with lets between them) around one scalar Store whose
 * value is a Load of the same type, one side an LDM buffer of the kernel and the other a
 * main-memory buffer of its closure. Staged inputs (`f.in().compute_at(...).store_in(LDM)`)
 * lower to such nests, and so does the write-back of an LDM tile to an output.
 *
 * Both indices must be affine in the loop variables: the first difference of each index
 * along each loop must simplify to an expression free of the nest's variables.
 * The innermost dimensions that are contiguous on both sides are merged into one block;
 * the next dimension, if the LDM side is dense there, becomes the rows of one strided
 * request (bsize = block bytes, stride = gap between blocks); outer dimensions stay loops
 * that issue one request per iteration. A nest that is not affine over all its loops (an
 * index loaded from memory in an outer loop: a gather's rows) keeps its outermost loop and
 * the nest inside it is lowered on its own, down to the innermost loop. A nest that is not
 * affine, or whose innermost dimension is not contiguous on both sides, gets one request per
 * element: slow but exact, never wrong. Each nest becomes
 *   sw_dma_begin(site); loops { sw_dma_request(...) }; sw_dma_wait(site)
 * (SunwayIR.h)
 * which the CPE code generator prints as athread_get/athread_put with a reply word and a
 * wait for all requests of the site.
 *
 * A guarded copy, ldm[i] = in_bounds ? main[clamped j] : fill (a staged zero-padded Func),
 * is solved for its in-bounds box per dimension: the box comes by DMA straight to its place
 * in the padded layout (one strided request when its rows are consecutive in the LDM, else
 * one request per row), and only the elements outside the box are filled (no copy inside
 * the LDM, no test per element).
 *
 * Loads and stores of main memory that are not such copies stay as they are: direct
 * main-memory accesses from the CPE, legal but slow; they are listed in the kernel.
 */
#ifndef SW_INJECT_DMA_H
#define SW_INJECT_DMA_H

#include "target_sw/SwModule.h"

#include <set>
#include <string>

namespace sw {

/** Replaces the copy nests of \p k.body by DMA, and fills \p k.dma and \p k.direct_accesses.
 * The zero-padded windows of the LDM buffers named in \p rows_in_place (those shared by
 * broadcast DMA, sw::broadcast: their DMA is issued once for the core group, by up to eight
 * CPEs) whose box
 * rows are whole source rows come one request per row straight to their padded place, instead
 * of compactly and then spread by every CPE. (A window each CPE fetches for itself keeps the
 * compact request: one request per row would cost each CPE a request per row.) Data moved
 * within the LDM (compaction, spreading) moves in vectors of \p lanes (the machine's float
 * vector). */
void inject_dma(CpeKernel &k, int lanes, const std::set<std::string> &rows_in_place = {});

} // namespace sw

#endif
