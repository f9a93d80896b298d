/** \file
 * cast: int64 to float32, element by element (ONNX Cast of a computed int64 tensor to float,
 * e.g. a transformer's attention mask before it becomes an additive mask), on the flattened
 * tensor:
 *   size   the number of elements
 * The hand schedule is relu's chunks of consecutive elements over the CPEs, the chunk sized
 * for the 8-byte input and the 4-byte result in LDM.
 */
#include "generators/LayerGenerator.h"
#include "schedules/elementwise_schedule.h"

namespace {

using namespace Halide;

class Cast : public layers::LayerGenerator<Cast> {
public:
    GeneratorParam<int> size{"size", 64};

    Input<Buffer<int64_t>> input{"input", 1};
    Output<Buffer<float>> output{"output", 1};

    void generate() {
        sw::check_param(size >= 1, "cast: size must be >= 1");
        /* THE ALGORITHM */
        result(i) = cast<float>(input(i));
        output(i) = result(i);
        sw::set_dense_shape(input, {size}, {"size"});
        sw::set_dense_shape(output, {size}, {"size"});
    }

    void schedule() {
        /* THE SCHEDULE: chunks of consecutive elements over the CPEs, as relu's */
        schedules::ReluStages st{output, result, input, i};
        apply_schedule(
            [&] {
                // The input chunk (8 bytes an element) and the result's (4): as long as
                // possible while every CPE gets work.
                const sw::Machine &m = target_machine();
                const int64_t most = schedules::ldm_plan_budget(m, 2) / 12;
                int chunk = 16;
                while (chunk * 2 <= most && int64_t(chunk) * 2 * m.cpes_per_core_group <= size)
                    chunk *= 2;
                schedules::schedule_relu_chunks(st, size, chunk);
            },
            [&] { schedules::schedule_relu_chunks(st, size, 256); },
            [&] { schedules::schedule_relu_cpu(st); });
    }

private:
    Var i{"i"};
    Func result{"result"};
};

} // namespace

HALIDE_REGISTER_GENERATOR(Cast, cast)
