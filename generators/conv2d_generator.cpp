/** \file
 * conv2d: a 2-D convolution layer, NCHW float32 (Halide dims x, y, c, n), weights in
 * PyTorch's OIHW layout (Halide dims kx, ky, ci, co), bias per output channel, optional
 * fused ReLU. Every shape is a generator parameter, so each layer is compiled for its own
 * shape and every LDM buffer has a constant bound.
 */
#include "Halide.h"
#include "schedules/conv2d_schedule.h"
#include "target_sw/GeneratorSupport.h"

namespace {

using namespace Halide;

class Conv2D : public Generator<Conv2D> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> in_channels{"in_channels", 3};
    GeneratorParam<int> out_channels{"out_channels", 8};
    GeneratorParam<int> height{"height", 16};
    GeneratorParam<int> width{"width", 16};
    GeneratorParam<int> kernel{"kernel", 3};
    GeneratorParam<int> stride{"stride", 1};
    GeneratorParam<int> pad{"pad", 1};
    GeneratorParam<bool> relu{"relu", true};
    /** Tile sizes of the hand Sunway schedule; 0 lets it choose from the LDM budget. */
    GeneratorParam<int> tile_x{"tile_x", 0};
    GeneratorParam<int> tile_y{"tile_y", 0};
    GeneratorParam<int> tile_c{"tile_c", 0};
    GeneratorParam<int> tile_ci{"tile_ci", 0};
    /** "sunway" (hand Sunway schedule) or "cpu" (x86 reference build). */
    GeneratorParam<std::string> schedule_name{"schedule", "sunway"};
    /** Machine whose LDM the Sunway schedule fits: "sw26010" or "sw26010-pro". */
    GeneratorParam<std::string> machine{"machine", "sw26010"};

    Input<Buffer<float>> input{"input", 4};      // x, y, c, n
    Input<Buffer<float>> weights{"weights", 4};  // kx, ky, ci, co
    Input<Buffer<float>> bias{"bias", 1};        // co
    Output<Buffer<float>> output{"output", 4};   // x, y, co, n

    void generate() {
        const schedules::Conv2DShape s = shape();
        sw::check_param(s.batch >= 1, "conv2d: batch must be >= 1");
        sw::check_param(s.in_channels >= 1 && s.out_channels >= 1,
                        "conv2d: in_channels and out_channels must be >= 1");
        sw::check_param(s.kernel >= 1 && s.stride >= 1 && s.pad >= 0,
                        "conv2d: kernel and stride must be >= 1 and pad >= 0");
        sw::check_param(s.height >= 1 && s.width >= 1, "conv2d: height and width must be >= 1");
        sw::check_param(s.out_height() >= 1 && s.out_width() >= 1 &&
                            s.height + 2 * s.pad >= s.kernel && s.width + 2 * s.pad >= s.kernel,
                        "conv2d: the kernel (" + std::to_string(s.kernel) +
                            ") is larger than the padded input (" +
                            std::to_string(s.height + 2 * s.pad) + "x" +
                            std::to_string(s.width + 2 * s.pad) + ")");

        /* THE ALGORITHM */
        Func padded = s.pad > 0 ? BoundaryConditions::constant_exterior(
                                      input, 0.f, {{0, s.width}, {0, s.height}})
                                : Func(input);
        r = RDom(0, s.kernel, 0, s.kernel, 0, s.in_channels, "r");
        conv(x, y, c, n) = bias(c);
        conv(x, y, c, n) += weights(r.x, r.y, r.z, c) *
                            padded(x * s.stride + r.x - s.pad, y * s.stride + r.y - s.pad, r.z, n);
        if (relu) conv(x, y, c, n) = max(conv(x, y, c, n), 0.f);
        output(x, y, c, n) = conv(x, y, c, n);

        sw::set_dense_shape(input, {s.width, s.height, s.in_channels, s.batch});
        sw::set_dense_shape(weights, {s.kernel, s.kernel, s.in_channels, s.out_channels});
        sw::set_dense_shape(bias, {s.out_channels});
        sw::set_dense_shape(output, {s.out_width(), s.out_height(), s.out_channels, s.batch});
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::Conv2DStages st{output, conv, input, weights, bias, x, y, c, n, r};
        const std::string which = schedule_name;
        if (which == "sunway") {
            sw::check_param(tile_x >= 0 && tile_y >= 0 && tile_c >= 0 && tile_ci >= 0,
                            "conv2d: tile sizes must be >= 0 (0 = chosen by the schedule)");
            sw::check_param(tile_ci == 0 || int(in_channels) % int(tile_ci) == 0,
                            "conv2d: tile_ci (" + std::to_string(tile_ci) +
                                ") must divide in_channels (" + std::to_string(in_channels) + ")");
            schedules::schedule_conv2d_sunway(st, shape(), sw::machine_param(machine),
                                              {tile_x, tile_y, tile_c, tile_ci, 0});
        } else if (which == "cpu") {
            schedules::schedule_conv2d_cpu(st, shape());
        } else {
            sw::check_param(false, "conv2d: unknown schedule '" + which + "' (sunway or cpu)");
        }
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func conv{"conv"};
    RDom r;

    schedules::Conv2DShape shape() const {
        return {batch, in_channels, out_channels, height, width, kernel, stride, pad};
    }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(Conv2D, conv2d)
