/** \file
 * channel_shuffle: ShuffleNet's Reshape (N, g, C/g, H, W) - Transpose (0, 2, 1, 3, 4) -
 * Reshape (N, C, H, W), NCHW float32 (Halide dims x, y, c, n): output channel c = i * g + j
 * (i < C/g, j < g) is input channel j * (C/g) + i, i.e.
 *   out(x, y, c, n) = in(x, y, (c % g) * (C / g) + c / g, n)
 * (computed as c * (C / g) - (c / g) * (C - 1), see generate()).
 */
#include "generators/LayerGenerator.h"
#include "schedules/pointwise_schedule.h"

namespace {

using namespace Halide;

class ChannelShuffle : public layers::LayerGenerator<ChannelShuffle> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> channels{"channels", 4};
    GeneratorParam<int> height{"height", 8};
    GeneratorParam<int> width{"width", 8};
    GeneratorParam<int> groups{"groups", 2};
    /** The same memory seen as the transpose it is: the input as (H*W, C/g, g, N), the output
     * as (H*W, g, C/g, N), out(p, j, i, n) = in(p, i, j, n). A tile of the output's i then
     * stages g contiguous runs of the input (one strided get) and puts one contiguous block,
     * instead of one channel per tile. */
    GeneratorParam<bool> transposed_view{"transposed_view", false};
    /** 1, or `groups` (with transposed_view): one input per group, each (H*W, C/g, 1, N), a
     * concatenation fused in (graph's fuse_concat_into_shuffle): out(p, j, i, n) = input j at
     * (p, i, 0, n). The inputs after the first are input_1, input_2, ... */
    GeneratorParam<int> inputs{"inputs", 1};

    Input<Buffer<float>> input{"input", 4};
    Output<Buffer<float>> output{"output", 4};

    void configure() {
        for (int k = 1; k < inputs; k++)
            more_.push_back(add_input<Buffer<float>>("input_" + std::to_string(k), 4));
    }

    void generate() {
        sw::check_param(batch >= 1 && channels >= 1 && height >= 1 && width >= 1,
                        "channel_shuffle: batch, channels, height and width must be >= 1");
        sw::check_param(groups >= 1 && int(channels) % int(groups) == 0,
                        "channel_shuffle: groups (" + std::to_string(groups) +
                            ") must divide channels (" + std::to_string(channels) + ")");
        /* THE ALGORITHM */
        const int g = groups, per_group = int(channels) / g;
        // (c % g) * per_group + c / g, written without the modulo: c * per_group - (c / g) *
        // (channels - 1) is the same integer. Halide bounds c % g by [0, g - 1] unless it
        // sees c as one point, which it does not inside a tile (c = co + ci, ci in [0, 0]):
        // a one-channel tile of 116 channels of 28x28 staged 59 channels (185 KB of LDM).
        // Here a one-channel tile's box is one channel; the clamp, a no-op on the values,
        // keeps the box of a many-channel tile inside the input.
        sw::check_param(int(inputs) == 1 || (int(inputs) == int(groups) && transposed_view),
                        "channel_shuffle: inputs must be 1, or groups (" + std::to_string(groups) +
                            ") with transposed_view=true");
        if (transposed_view && inputs > 1) {
            // One input per group j: the select picks input y.
            Expr v = (*more_.back())(x, c, 0, n);
            for (int k = int(inputs) - 2; k >= 0; k--) {
                Expr in_k = k == 0 ? input(x, c, 0, n) : (*more_[size_t(k - 1)])(x, c, 0, n);
                v = select(y == k, in_k, v);
            }
            output(x, y, c, n) = v;
            const int plane = int(width) * int(height);
            const std::vector<std::string> names = {"height * width", "channels / groups", "1",
                                                    "batch"};
            sw::set_dense_shape(input, {plane, per_group, 1, batch}, names);
            for (Input<Buffer<float>> *m : more_)
                sw::set_dense_shape(*m, {plane, per_group, 1, batch}, names);
            sw::set_dense_shape(output, {plane, g, per_group, batch},
                                {"height * width", "groups", "channels / groups", "batch"});
            shape_ = {batch, per_group, g, plane, int(inputs), 0, false, false};
            return;
        }
        if (transposed_view) {
            // x: a pixel, y: the group j, c: the channel i within the group.
            output(x, y, c, n) = input(x, c, y, n);
            const int plane = int(width) * int(height);
            sw::set_dense_shape(input, {plane, per_group, g, batch},
                                {"height * width", "channels / groups", "groups", "batch"});
            sw::set_dense_shape(output, {plane, g, per_group, batch},
                                {"height * width", "groups", "channels / groups", "batch"});
            shape_ = {batch, per_group, g, plane, 1, 0, false, true};
            return;
        }
        const Expr src = c * per_group - (c / g) * (int(channels) - 1);
        output(x, y, c, n) = input(x, y, clamp(src, 0, int(channels) - 1), n);

        const std::vector<std::string> names = {"width", "height", "channels", "batch"};
        sw::set_dense_shape(input, {width, height, channels, batch}, names);
        sw::set_dense_shape(output, {width, height, channels, batch}, names);
        // A copy: the staged input goes straight back out; one channel per tile, as the
        // channels of a tile are not contiguous in the input.
        shape_ = {batch, channels, height, width, 1, 0, false, true};
    }

    void schedule() {
        /* THE SCHEDULE */
        std::vector<Func> ins = {input};
        for (Input<Buffer<float>> *m : more_)
            ins.push_back(*m);
        schedules::PointwiseStages st{output, Func(), ins, x, y, c, n};
        apply_schedule(
            [&] { schedules::schedule_pointwise_sunway(st, shape_, target_machine()); },
            [&] { schedules::schedule_pointwise_baseline(st, shape_, target_machine()); },
            [&] { schedules::schedule_pointwise_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    schedules::PointwiseShape shape_{};
    std::vector<Input<Buffer<float>> *> more_; ///< input_1 ... with inputs > 1
};

} // namespace

HALIDE_REGISTER_GENERATOR(ChannelShuffle, channel_shuffle)
