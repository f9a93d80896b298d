/** \file
 * What the generator driver (SunwayGenGen.cpp) and the autoschedule CLI share when they
 * build a generator for a Sunway machine: setting its GeneratorParams (the `machine`
 * parameter only if the generator declares one), and the warning for a pipeline that
 * the Sunway lowering left without any CPE kernel.
 */
#ifndef SW_DRIVER_SUPPORT_H
#define SW_DRIVER_SUPPORT_H

#include "Halide.h"
#include "target_sw/Machine.h"
#include "target_sw/SwModule.h"

#include <string>

namespace sw {

/** Whether generator \p g declares a GeneratorParam named \p name. */
bool declares_generator_param(Halide::Internal::GeneratorBase &g, const std::string &name);

/** Sets \p params on \p g and, when \p g declares a `machine` GeneratorParam that
 * \p params does not set, sets it to \p m's name (LayerGenerator's schedules size their
 * tiles for that machine). A generator without one is built as it is. */
void set_sunway_generator_params(Halide::Internal::GeneratorBase &g,
                                 Halide::Internal::GeneratorParamsMap params, const Machine &m);

/** "" if \p f has a CPE kernel; otherwise the warning (without "warning: ") that the
 * generated code runs on the MPE alone, with a modelled time of 0. */
std::string host_only_warning(const SwFunction &f);

} // namespace sw

#endif
