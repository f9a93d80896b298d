/** \file
 * Pass 6 of the Sunway lowering: keeps accumulators in registers.
 *
 * When a loop nest repeatedly loads and stores the same LDM element (or vector) -- the
 * accumulator of a reduction whose index does not change inside the nest -- the element is
 * loaded once before the nest into a register, updated there, and stored once after it:
 *   allocate sw_acc[1] in Register { sw_acc = buf[i]; loop { ... sw_acc ... }; buf[i] = sw_acc }
 * The CPE code generator prints such a register as a C local, and the work counting
 * charges no load or store for it. A nest qualifies only if the buffer is an LDM buffer of
 * the kernel allocated outside the nest, the nest does no DMA, the buffer is stored and
 * accessed at least twice in it, every index it is accessed at depends on nothing the nest
 * defines, and those indices are provably disjoint (constant offsets at least a vector apart:
 * a register block gets one register per distinct index); and the registers the nest promotes
 * (with those of the nests around it) leave Machine::operand_registers of the machine's vector
 * registers free. Every access to the buffer at a promoted index in the nest, in a let's value
 * too, then uses the register.
 */
#ifndef SW_PROMOTE_ACCUMULATORS_H
#define SW_PROMOTE_ACCUMULATORS_H

#include "target_sw/SwModule.h"

namespace sw {

/* The register variables this pass introduces are named by ir::new_register_name and
 * recognised by ir::is_register (SunwayIR.h). */

void promote_accumulators(CpeKernel &k, const Machine &m);

} // namespace sw

#endif
