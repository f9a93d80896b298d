/** \file
 * Pass 6 of the Sunway lowering: keeps accumulators in registers.
 *
 * When a loop nest repeatedly loads and stores the same LDM element (or vector) -- the
 * accumulator of a reduction whose index does not change inside the nest -- the element is
 * loaded once before the nest into a register, updated there, and stored once after it:
 *   allocate sw_acc[1] in Register { sw_acc = buf[i]; loop { ... sw_acc ... }; buf[i] = sw_acc }
 * The CPE code generator prints such a register as a C local, and the work counting
 * charges no load or store for it. A nest qualifies only if every access to the buffer in
 * it uses that one index, the index depends on nothing the nest defines, and the buffer is
 * an LDM buffer of the kernel, and the registers the nest promotes (with those of the nests
 * around it) leave Machine::operand_registers of the machine's vector registers free.
 */
#ifndef SW_PROMOTE_ACCUMULATORS_H
#define SW_PROMOTE_ACCUMULATORS_H

#include "target_sw/SwModule.h"

namespace sw {

/* The register variables this pass introduces are named by ir::new_register_name and
 * recognised by ir::is_register (SunwayIR.h). */

void promote_accumulators(CpeKernel &k, const Machine &m);

}  // namespace sw

#endif
