/** \file
 * channel_affine: out(x, y, c, n) = input(x, y, c, n) * scale(c) + shift(c), NCHW float32
 * (Halide dims x, y, c, n), optional fused ReLU. A BatchNormalization that could not be
 * folded into a convolution (the importer's `ChannelScaleShift`: scale = gamma /
 * sqrt(var + eps), shift = beta - mean * scale).
 */
#include "generators/LayerGenerator.h"
#include "schedules/pointwise_schedule.h"

namespace {

using namespace Halide;

class ChannelAffine : public layers::LayerGenerator<ChannelAffine> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> channels{"channels", 4};
    GeneratorParam<int> height{"height", 8};
    GeneratorParam<int> width{"width", 8};
    GeneratorParam<bool> relu{"relu", false};

    Input<Buffer<float>> input{"input", 4};
    Input<Buffer<float>> scale{"scale", 1};
    Input<Buffer<float>> shift{"shift", 1};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        sw::check_param(batch >= 1 && channels >= 1 && height >= 1 && width >= 1,
                        "channel_affine: batch, channels, height and width must be >= 1");
        /* THE ALGORITHM */
        Expr v = input(x, y, c, n) * scale(c) + shift(c);
        if (relu)
            v = max(v, 0.f);
        result(x, y, c, n) = v;
        output(x, y, c, n) = result(x, y, c, n);

        const std::vector<std::string> names = {"width", "height", "channels", "batch"};
        sw::set_dense_shape(input, {width, height, channels, batch}, names);
        sw::set_dense_shape(scale, {channels}, {"channels"});
        sw::set_dense_shape(shift, {channels}, {"channels"});
        sw::set_dense_shape(output, {width, height, channels, batch}, names);
        shape_ = {batch, channels, height, width, 1, 2, !relu, false};
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::PointwiseStages st{output, result, {input, scale, shift}, x, y, c, n};
        apply_schedule(
            [&] { schedules::schedule_pointwise_sunway(st, shape_, target_machine()); },
            [&] { schedules::schedule_pointwise_baseline(st, shape_, target_machine()); },
            [&] { schedules::schedule_pointwise_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func result{"result"};
    schedules::PointwiseShape shape_{};
};

} // namespace

HALIDE_REGISTER_GENERATOR(ChannelAffine, channel_affine)
