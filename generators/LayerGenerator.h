/** \file
 * The base of every layer generator: the parameters all layers share.
 *   schedule = sunway   the hand Sunway schedule (schedules/)
 *            | baseline the OpenACC-style Sunway baseline (schedules/, documented there)
 *            | cpu      a plain x86 schedule for Halide's own CPU build (reference)
 *   machine  = the Sunway machine whose LDM the schedule fits (set by the driver from target=)
 * Built with auto_schedule=true (the driver's -p/-s, see target_sw/SunwayGenGen.cpp), a
 * generator is scheduled by the autoscheduler instead: its schedule() then returns at once
 * (autoscheduled()), leaving the pipeline unscheduled, and `schedule` is ignored.
 */
#ifndef GENERATORS_LAYER_GENERATOR_H
#define GENERATORS_LAYER_GENERATOR_H

#include "Halide.h"
#include "target_sw/GeneratorSupport.h"

#include <string>

namespace layers {

enum class ScheduleKind { Sunway, Baseline, Cpu };

/** \p v, or \p fallback where \p v is the parameter's "not given" value \p unset
 * (e.g. kernel_y=0 means "same as kernel", pad_left=-1 "same as pad"). */
inline int or_default(int v, int fallback, int unset) {
    return v == unset ? fallback : v;
}

template <typename T> class LayerGenerator : public Halide::Generator<T> {
public:
    Halide::GeneratorParam<std::string> schedule_name{"schedule", "sunway"};
    Halide::GeneratorParam<std::string> machine{"machine", "sw26010"};

protected:
    ScheduleKind schedule_kind() const {
        const std::string s = schedule_name;
        if (s == "sunway" || s == "hand")
            return ScheduleKind::Sunway;
        if (s == "baseline")
            return ScheduleKind::Baseline;
        if (s == "cpu")
            return ScheduleKind::Cpu;
        throw sw::UserError("unknown schedule '" + s + "' (sunway, baseline or cpu)");
    }
    const sw::Machine &target_machine() const { return sw::machine_param(machine); }
    /** True when the generator is built with auto_schedule=true: an autoscheduler schedules
     * the pipeline after schedule(), which must then apply none of the hand, baseline or CPU
     * schedules (Halide's autoschedulers refuse partially scheduled Funcs). */
    bool autoscheduled() const { return this->get_auto_schedule(); }
    /** The one dispatch of schedule(): nothing when autoscheduled, else the hand Sunway,
     * baseline or CPU schedule the `schedule` parameter names. */
    template <typename SunwayFn, typename BaselineFn, typename CpuFn>
    void apply_schedule(SunwayFn &&sunway, BaselineFn &&baseline, CpuFn &&cpu) const {
        if (autoscheduled())
            return;
        switch (schedule_kind()) {
        case ScheduleKind::Sunway:
            sunway();
            break;
        case ScheduleKind::Baseline:
            baseline();
            break;
        case ScheduleKind::Cpu:
            cpu();
            break;
        }
    }
};

} // namespace layers

#endif
