/** \file
 * Pass 5 of the Sunway lowering: asynchronous DMA. InjectDma waits for each transfer right
 * after issuing it; this pass moves every wait down to the first statement that needs the
 * transfer done, so that transfers overlap each other and the computation between them.
 *
 * A wait for a get into LDM buffer B moves past statements that neither read, write nor
 * free B; a wait for a put from B moves past statements that neither write nor free B.
 * Waits never leave the loop body or branch they were issued in (each iteration waits for
 * its own transfers), and every pending wait is issued before its buffer is freed and at
 * the end of the kernel body.
 */
#ifndef SW_DELAY_DMA_WAITS_H
#define SW_DELAY_DMA_WAITS_H

#include "target_sw/SwModule.h"

namespace sw {

void delay_dma_waits(CpeKernel &k);

} // namespace sw

#endif
