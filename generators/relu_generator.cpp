/** \file
 * relu: out(i) = max(in(i), 0) on a flat tensor of `size` floats (any tensor, flattened).
 */
#include "generators/LayerGenerator.h"
#include "schedules/elementwise_schedule.h"

namespace {

using namespace Halide;

class Relu : public layers::LayerGenerator<Relu> {
public:
    GeneratorParam<int> size{"size", 64};

    Input<Buffer<float>> input{"input", 1};
    Output<Buffer<float>> output{"output", 1};

    void generate() {
        sw::check_param(size >= 1, "relu: size must be >= 1");
        /* THE ALGORITHM */
        result(i) = max(input(i), 0.f);
        output(i) = result(i);
        sw::set_dense_shape(input, {size}, {"size"});
        sw::set_dense_shape(output, {size}, {"size"});
    }

    void schedule() {
        /* THE SCHEDULE */
        if (autoscheduled()) return;  // the autoscheduler schedules the pipeline (-s, auto_schedule=true)
        schedules::ReluStages st{output, result, input, i};
        switch (schedule_kind()) {
        case layers::ScheduleKind::Sunway:
            schedules::schedule_relu_sunway(st, size, target_machine());
            break;
        case layers::ScheduleKind::Baseline:
            schedules::schedule_relu_baseline(st, size);
            break;
        case layers::ScheduleKind::Cpu:
            schedules::schedule_relu_cpu(st);
            break;
        }
    }

private:
    Var i{"i"};
    Func result{"result"};
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Relu, relu)
