/** \file
 * softmax over the innermost dimension of a (classes, rows) tensor, numerically stable:
 * out(c, n) = exp(in(c, n) - max_c in) / sum_c exp(in(c, n) - max_c in).
 */
#include "generators/LayerGenerator.h"
#include "schedules/elementwise_schedule.h"

#include <limits>

namespace {

using namespace Halide;

class Softmax : public layers::LayerGenerator<Softmax> {
public:
    GeneratorParam<int> batch{"batch", 1}; ///< rows
    GeneratorParam<int> classes{"classes", 10};

    Input<Buffer<float>> input{"input", 2};    // c, n
    Output<Buffer<float>> output{"output", 2}; // c, n

    void generate() {
        sw::check_param(batch >= 1 && classes >= 1, "softmax: batch and classes must be >= 1");
        /* THE ALGORITHM */
        RDom r(0, int(classes), "r");
        maxv(n) = -std::numeric_limits<float>::infinity();
        maxv(n) = max(maxv(n), input(r, n));
        exps(c, n) = exp(input(c, n) - maxv(n));
        sum(n) = 0.f;
        sum(n) += exps(r, n);
        result(c, n) = exps(c, n) / sum(n);
        output(c, n) = result(c, n);
        sw::set_dense_shape(input, {classes, batch}, {"classes", "batch"});
        sw::set_dense_shape(output, {classes, batch}, {"classes", "batch"});
    }

    void schedule() {
        /* THE SCHEDULE */
        if (autoscheduled())
            return; // the autoscheduler schedules the pipeline (-s, auto_schedule=true)
        schedules::SoftmaxStages st{output, result, exps, maxv, sum, input, c, n};
        if (schedule_kind() == layers::ScheduleKind::Cpu) {
            schedules::schedule_softmax_cpu(st);
            return;
        }
        const int64_t need = schedules::softmax_ldm_bytes(classes);
        sw::check_param(need <= schedules::ldm_plan_budget(target_machine(), 5),
                        "softmax: " + std::to_string(int(classes)) + " classes need " +
                            std::to_string(need) + " bytes of LDM per row, more than a " +
                            target_machine().name + " CPE has");
        schedules::schedule_softmax_sunway(st); // the baseline is the same (see the schedule)
    }

private:
    Var c{"c"}, n{"n"};
    Func maxv{"maxv"}, exps{"exps"}, sum{"sum"}, result{"result"};
};

} // namespace

HALIDE_REGISTER_GENERATOR(Softmax, softmax)
