/** \file
 * global_pool: GlobalAveragePool / GlobalMaxPool, and ReduceMean over the spatial axes
 * with keepdims (the same kernel), NCHW float32 (Halide dims x, y, c, n): the output is
 * (1, 1, C, N), the mean (type=avg), the largest value (type=max) or the sum (type=sum:
 * ReduceSum) of each channel's height x width plane.
 */
#include "generators/LayerGenerator.h"
#include "schedules/global_pool_schedule.h"

#include <limits>

namespace {

using namespace Halide;

class GlobalPool : public layers::LayerGenerator<GlobalPool> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> channels{"channels", 4};
    GeneratorParam<int> height{"height", 7};
    GeneratorParam<int> width{"width", 7};
    GeneratorParam<std::string> type{"type", "avg"}; ///< avg, max or sum

    Input<Buffer<float>> input{"input", 4};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        const std::string kind = type;
        sw::check_param(kind == "max" || kind == "avg" || kind == "sum",
                        "global_pool: type must be avg, max or sum, not '" + kind + "'");
        sw::check_param(batch >= 1 && channels >= 1 && height >= 1 && width >= 1,
                        "global_pool: batch, channels, height and width must be >= 1");
        /* THE ALGORITHM */
        const bool is_max = kind == "max";
        r = RDom(0, int(width), 0, int(height), "r");
        pool(c, n) = is_max ? -std::numeric_limits<float>::infinity() : 0.f;
        Expr v = input(r.x, r.y, c, n);
        pool(c, n) = is_max ? max(pool(c, n), v) : pool(c, n) + v;
        Expr out = is_max || kind == "sum" ? pool(c, n)
                                           : pool(c, n) * (1.f / float(int(width) * int(height)));
        output(x, y, c, n) = out;

        sw::set_dense_shape(input, {width, height, channels, batch},
                            {"width", "height", "channels", "batch"});
        sw::set_dense_shape(output, {1, 1, channels, batch}, {"", "", "channels", "batch"});
        shape_ = {batch, channels, height, width};
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::GlobalPoolStages st{output, pool, input, x, y, c, n, r};
        apply_schedule(
            [&] { schedules::schedule_global_pool_sunway(st, shape_, target_machine()); },
            [&] { schedules::schedule_global_pool_baseline(st, shape_, target_machine()); },
            [&] { schedules::schedule_global_pool_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func pool{"pool"};
    RDom r;
    schedules::GlobalPoolShape shape_{};
};

} // namespace

HALIDE_REGISTER_GENERATOR(GlobalPool, global_pool)
