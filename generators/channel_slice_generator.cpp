/** \file
 * channel_slice: a contiguous range of channels of an NCHW float32 tensor (Halide dims x,
 * y, c, n), as ONNX Slice (step 1 along one axis) and Split produce it, e.g. ShuffleNetV2's
 * x.chunk(2, dim=1):
 *   out(x, y, c, n) = in(x, y, begin + c, n),   c < channels,
 * where the input has in_channels >= begin + channels. A slice along any other axis reduces
 * to this one (the dims before it as the batch, those after it as the width).
 */
#include "generators/LayerGenerator.h"
#include "schedules/pointwise_schedule.h"

namespace {

using namespace Halide;

class ChannelSlice : public layers::LayerGenerator<ChannelSlice> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> in_channels{"in_channels", 8};
    GeneratorParam<int> begin{"begin", 0};
    GeneratorParam<int> channels{"channels", 4}; ///< of the output
    GeneratorParam<int> height{"height", 8};
    GeneratorParam<int> width{"width", 8};

    Input<Buffer<float>> input{"input", 4};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        sw::check_param(batch >= 1 && channels >= 1 && height >= 1 && width >= 1,
                        "channel_slice: batch, channels, height and width must be >= 1");
        sw::check_param(begin >= 0 && int(begin) + int(channels) <= int(in_channels),
                        "channel_slice: begin (" + std::to_string(begin) + ") + channels (" +
                            std::to_string(channels) + ") must be <= in_channels (" +
                            std::to_string(in_channels) + ")");
        /* THE ALGORITHM */
        output(x, y, c, n) = input(x, y, c + int(begin), n);

        sw::set_dense_shape(input, {width, height, in_channels, batch},
                            {"width", "height", "in_channels", "batch"});
        sw::set_dense_shape(output, {width, height, channels, batch},
                            {"width", "height", "channels", "batch"});
        // A copy: the staged input goes straight back out (its channels are contiguous).
        shape_ = {batch, channels, height, width, 1, 0, false, false};
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::PointwiseStages st{output, Func(), {input}, x, y, c, n};
        apply_schedule(
            [&] { schedules::schedule_pointwise_sunway(st, shape_, target_machine()); },
            [&] { schedules::schedule_pointwise_baseline(st, shape_, target_machine()); },
            [&] { schedules::schedule_pointwise_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    schedules::PointwiseShape shape_{};
};

} // namespace

HALIDE_REGISTER_GENERATOR(ChannelSlice, channel_slice)
