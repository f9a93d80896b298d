/** \file
 * lrn: local response normalisation across channels (AlexNet's), NCHW float32:
 *   out = in / (k + alpha / size * sum_{c' = c - (size-1)/2}^{c + size/2} in(c')^2) ^ beta,
 * with alpha divided by size as in Caffe, PyTorch and ONNX; channels outside the tensor
 * count as zero.
 */
#include "generators/LayerGenerator.h"
#include "schedules/lrn_schedule.h"

namespace {

using namespace Halide;

class Lrn : public layers::LayerGenerator<Lrn> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> channels{"channels", 8};
    GeneratorParam<int> height{"height", 8};
    GeneratorParam<int> width{"width", 8};
    GeneratorParam<int> size{"size", 5};
    GeneratorParam<float> alpha{"alpha", 1e-4f};
    GeneratorParam<float> beta{"beta", 0.75f};
    GeneratorParam<float> k{"k", 1.0f};

    Input<Buffer<float>> input{"input", 4};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        sw::check_param(batch >= 1 && channels >= 1 && height >= 1 && width >= 1,
                        "lrn: batch, channels, height and width must be >= 1");
        sw::check_param(size >= 1, "lrn: size must be >= 1");
        sw::check_at_most("lrn", {{"size", size}}, sw::kMaxWindowParam);
        /* THE ALGORITHM */
        Func zero_outside =
            BoundaryConditions::constant_exterior(input, 0.f, {Range(), Range(), {0, channels}});
        const int before = (size - 1) / 2;
        RDom r(0, int(size), "r");
        Expr v = zero_outside(x, y, c + r - before, n);
        norm(x, y, c, n) = 0.f;
        norm(x, y, c, n) += v * v;
        norm(x, y, c, n) = pow(k + (alpha / float(size)) * norm(x, y, c, n), beta);
        result(x, y, c, n) = input(x, y, c, n) / norm(x, y, c, n);
        output(x, y, c, n) = result(x, y, c, n);

        sw::set_dense_shape(input, {width, height, channels, batch},
                            {"width", "height", "channels", "batch"});
        sw::set_dense_shape(output, {width, height, channels, batch},
                            {"width", "height", "channels", "batch"});
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::LrnStages st{output, result, norm, input, x, y, c, n};
        const schedules::LrnShape s{batch, channels, height, width, size};
        apply_schedule([&] { schedules::schedule_lrn_sunway(st, s, target_machine()); },
                       [&] { schedules::schedule_lrn_baseline(st, s, target_machine()); },
                       [&] { schedules::schedule_lrn_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func norm{"norm"}, result{"result"};
};

} // namespace

HALIDE_REGISTER_GENERATOR(Lrn, lrn)
