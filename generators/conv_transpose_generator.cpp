/** \file
 * conv_transpose: a 2-D transposed convolution (ONNX ConvTranspose, PyTorch's ConvTranspose2d),
 * NCHW float32 (Halide dims x, y, c, n). Input (width, height, in_channels, batch), weights in
 * ONNX's (C, M / groups, kH, kW) layout (Halide dims kx, ky, co of the group, ci), bias per
 * output channel (M). Input pixel (ix, iy) scatters into output pixel
 * (ix * stride - pad_left + kx * dilation, iy * stride_y - pad_top + ky * dilation_y); written as
 * the gather it is:
 *   out(x, y, o, n) = bias(o) + sum over ci of o's group, ky, kx of
 *       in((x + pad_left - kx d) / s, (y + pad_top - ky d_y) / s_y, ci, n) * w(kx, ky, o % Mg, ci)
 * over the terms whose divisions are exact and land inside the input. The output is
 *   stride * (width - 1) + output_padding + (kernel - 1) * dilation + 1 - pad_left - pad_right
 * wide (and the same along y).
 */
#include "generators/LayerGenerator.h"
#include "schedules/conv_transpose_schedule.h"

namespace {

using namespace Halide;

class ConvTranspose : public layers::LayerGenerator<ConvTranspose> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> in_channels{"in_channels", 4};
    GeneratorParam<int> out_channels{"out_channels", 4};
    GeneratorParam<int> height{"height", 8};
    GeneratorParam<int> width{"width", 8};
    GeneratorParam<int> kernel{"kernel", 3};
    GeneratorParam<int> kernel_y{"kernel_y", 0}; ///< 0: same as kernel
    GeneratorParam<int> stride{"stride", 1};
    GeneratorParam<int> stride_y{"stride_y", 0}; ///< 0: same as stride
    GeneratorParam<int> dilation{"dilation", 1};
    GeneratorParam<int> dilation_y{"dilation_y", 0}; ///< 0: same as dilation
    GeneratorParam<int> pad_left{"pad_left", 0};
    GeneratorParam<int> pad_right{"pad_right", 0};
    GeneratorParam<int> pad_top{"pad_top", 0};
    GeneratorParam<int> pad_bottom{"pad_bottom", 0};
    GeneratorParam<int> output_padding{"output_padding", 0};
    GeneratorParam<int> output_padding_y{"output_padding_y", -1}; ///< -1: same as output_padding
    GeneratorParam<int> groups{"groups", 1};

    Input<Buffer<float>> input{"input", 4};     // x, y, ci, n
    Input<Buffer<float>> weights{"weights", 4}; // kx, ky, co of the group, ci
    Input<Buffer<float>> bias{"bias", 1};       // co
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        const int kx = kernel, ky = layers::or_default(kernel_y, kernel, 0);
        const int sx = stride, sy = layers::or_default(stride_y, stride, 0);
        const int dx = dilation, dy = layers::or_default(dilation_y, dilation, 0);
        const int opx = output_padding,
                  opy = layers::or_default(output_padding_y, output_padding, -1);
        const int pl = pad_left, pr = pad_right, pt = pad_top, pb = pad_bottom;
        const int w = width, h = height, ci = in_channels, co = out_channels, g = groups;
        sw::check_at_most("conv_transpose",
                          {{"batch", batch},
                           {"in_channels", ci},
                           {"out_channels", co},
                           {"height", h},
                           {"width", w}},
                          sw::kMaxExtentParam);
        sw::check_at_most("conv_transpose",
                          {{"kernel", kx},
                           {"kernel_y", ky},
                           {"stride", sx},
                           {"stride_y", sy},
                           {"dilation", dx},
                           {"dilation_y", dy},
                           {"pad_left", pl},
                           {"pad_right", pr},
                           {"pad_top", pt},
                           {"pad_bottom", pb},
                           {"output_padding", opx},
                           {"output_padding_y", opy}},
                          sw::kMaxWindowParam);
        sw::check_param(batch >= 1 && ci >= 1 && co >= 1 && h >= 1 && w >= 1,
                        "conv_transpose: batch, in_channels, out_channels, height and width "
                        "must be >= 1");
        sw::check_param(kx >= 1 && ky >= 1 && sx >= 1 && sy >= 1 && dx >= 1 && dy >= 1,
                        "conv_transpose: kernel, stride and dilation must be >= 1");
        sw::check_param(pl >= 0 && pr >= 0 && pt >= 0 && pb >= 0 && opx >= 0 && opy >= 0,
                        "conv_transpose: pads and output_padding must be >= 0");
        sw::check_param(g >= 1 && ci % g == 0 && co % g == 0,
                        "conv_transpose: groups must divide in_channels and out_channels");
        const int ow = sx * (w - 1) + opx + (kx - 1) * dx + 1 - pl - pr;
        const int oh = sy * (h - 1) + opy + (ky - 1) * dy + 1 - pt - pb;
        sw::check_param(ow >= 1 && oh >= 1, "conv_transpose: the pads leave no output (" +
                                                std::to_string(ow) + " x " + std::to_string(oh) +
                                                ")");
        const int cg = ci / g, mg = co / g;

        /* THE ALGORITHM */
        // The input spread out by the strides (zeros between its pixels), indexed by the
        // position p = x + pad - k d of a tap: input pixel p / s where s divides p.
        Var p("p"), q("q");
        Expr hit = p >= 0 && q >= 0 && p % sx == 0 && q % sy == 0 && p < w * sx && q < h * sy;
        spread(p, q, c, n) =
            select(hit, input(clamp(p / sx, 0, w - 1), clamp(q / sy, 0, h - 1), c, n), 0.f);
        r = RDom(0, kx, 0, ky, 0, cg, "r");
        Expr first = (c / mg) * cg; // the first input channel of c's group
        acc(x, y, c, n) = bias(c);
        // c % mg written only with groups: Halide bounds it by the whole group, not the tile.
        Expr within = g == 1 ? Expr(c) : c % mg;
        acc(x, y, c, n) += spread(x + pl - r.x * dx, y + pt - r.y * dy, first + r.z, n) *
                           weights(r.x, r.y, within, first + r.z);
        output(x, y, c, n) = acc(x, y, c, n);

        sw::set_dense_shape(input, {w, h, ci, batch}, {"width", "height", "in_channels", "batch"});
        sw::set_dense_shape(weights, {kx, ky, mg, ci},
                            {"kernel", "kernel_y", "out_channels / groups", "in_channels"});
        sw::set_dense_shape(bias, {co}, {"out_channels"});
        sw::set_dense_shape(output, {ow, oh, co, batch},
                            {"output width", "output height", "out_channels", "batch"});
        shape_ = {batch, ci, co, h, w, oh, ow, kx, ky, sx, sy, dx, dy, g};
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::ConvTransposeStages st{output, acc, input, weights, bias, x, y, c, n, r};
        apply_schedule(
            [&] { schedules::schedule_conv_transpose_sunway(st, shape_, target_machine()); },
            [&] { schedules::schedule_conv_transpose_baseline(st, shape_, target_machine()); },
            [&] { schedules::schedule_conv_transpose_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func spread{"spread"}, acc{"acc"};
    RDom r;
    schedules::ConvTransposeShape shape_{};
};

} // namespace

HALIDE_REGISTER_GENERATOR(ConvTranspose, conv_transpose)
