/** \file
 * conv2d: a 2-D convolution layer, NCHW float32 (Halide dims x, y, c, n), weights in
 * PyTorch's OIHW layout (Halide dims kx, ky, ci of the group, co), bias per output channel,
 * groups, asymmetric kernels, strides, dilations and padding, an optional fused residual add
 * (residual=true: a fourth input of the output's shape added to the sums, as a ResNet block's
 * shortcut) and an optional fused ReLU (or ReLU6-style clamp, relu_max), or with relu=false a
 * hard sigmoid or hard swish (activation=hard_sigmoid|hard_swish: h = max(0, min(1, alpha * v +
 * beta)), then h or v * h; MobileNetV3's), after it. Every shape is a
 * generator parameter, so each layer is compiled for its own shape and every LDM buffer has a
 * constant bound.
 *
 * An optional prologue on the input (prologue=scale_shift or scale_shift_relu: two more inputs
 * pre_scale and pre_shift, one value per input channel): the convolution reads
 * x * pre_scale[c] + pre_shift[c] (then max(., 0)) instead of x, a pre-activation network's
 * BatchNorm (+ ReLU) fused into the conv that reads it. The zero padding applies after the
 * prologue: a padded pixel is 0, not relu(pre_shift[c]). The schedules compute the prologue
 * once per staged input element (the padded window computed in LDM from the staged input).
 */
#include "generators/LayerGenerator.h"
#include "schedules/conv2d_schedule.h"

#include <cmath>

namespace {

using namespace Halide;

class Conv2D : public layers::LayerGenerator<Conv2D> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> in_channels{"in_channels", 3};
    GeneratorParam<int> out_channels{"out_channels", 8};
    GeneratorParam<int> height{"height", 16};
    GeneratorParam<int> width{"width", 16};
    GeneratorParam<int> kernel{"kernel", 3};     ///< kernel width (and height unless kernel_y)
    GeneratorParam<int> kernel_y{"kernel_y", 0}; ///< 0: same as kernel
    GeneratorParam<int> stride{"stride", 1};
    GeneratorParam<int> stride_y{"stride_y", 0}; ///< 0: same as stride
    GeneratorParam<int> pad{"pad", 1};           ///< every side, unless given below
    GeneratorParam<int> pad_left{"pad_left", -1};
    GeneratorParam<int> pad_right{"pad_right", -1};
    GeneratorParam<int> pad_top{"pad_top", -1};
    GeneratorParam<int> pad_bottom{"pad_bottom", -1};
    GeneratorParam<int> groups{"groups", 1};
    GeneratorParam<int> dilation{"dilation",
                                 1}; ///< kernel taps this many pixels apart along x (and y)
    GeneratorParam<int> dilation_y{"dilation_y", 0};  ///< 0: same as dilation
    GeneratorParam<bool> residual{"residual", false}; ///< adds the `residual` input before the ReLU
    GeneratorParam<bool> relu{"relu", true};
    /** With relu: the activation's upper bound too (ReLU6: 6, a fused Clip(0, max)); 0: none. */
    GeneratorParam<float> relu_max{"relu_max", 0.f};
    /** Without relu: none, hard_sigmoid or hard_swish after the conv (and its residual). */
    GeneratorParam<std::string> activation{"activation", "none"};
    GeneratorParam<float> alpha{"alpha", 1.f / 6.f}; ///< of the hard sigmoid (and swish)
    GeneratorParam<float> beta{"beta", 0.5f};
    /** The input's prologue: none, scale_shift (x * pre_scale[c] + pre_shift[c]) or
     * scale_shift_relu (then max(., 0)), before the zero padding. */
    GeneratorParam<std::string> prologue{"prologue", "none"};
    /** Tile sizes of the hand Sunway schedule; 0 lets it choose from the LDM budget. */
    GeneratorParam<int> tile_x{"tile_x", 0};
    GeneratorParam<int> tile_y{"tile_y", 0};
    GeneratorParam<int> tile_c{"tile_c", 0};
    GeneratorParam<int> tile_ci{"tile_ci", 0};

    Input<Buffer<float>> input{"input", 4};     // x, y, c, n
    Input<Buffer<float>> weights{"weights", 4}; // kx, ky, ci (of the group), co
    Input<Buffer<float>> bias{"bias", 1};       // co
    Output<Buffer<float>> output{"output", 4};  // x, y, co, n
    // With residual=true, configure() adds `residual` (x, y, co, n, the output's shape)
    // after bias; with a prologue, `pre_scale` and `pre_shift` (ci) after them: the arguments
    // are input, weights, bias[, residual][, pre_scale, pre_shift], output.

    void configure() {
        if (residual)
            residual_input = add_input<Buffer<float>>("residual", 4);
        const std::string p = prologue;
        if (p != "none" && p != "scale_shift" && p != "scale_shift_relu") {
            sw::check_param(false, "conv2d: prologue must be none, scale_shift or "
                                   "scale_shift_relu, not '" +
                                       p + "'");
        }
        if (p != "none") {
            pre_scale = add_input<Buffer<float>>("pre_scale", 1);
            pre_shift = add_input<Buffer<float>>("pre_shift", 1);
        }
    }

    void generate() {
        const schedules::Conv2DShape s = shape();
        sw::check_at_most("conv2d",
                          {{"batch", s.batch},
                           {"in_channels", s.in_channels},
                           {"out_channels", s.out_channels},
                           {"height", s.height},
                           {"width", s.width},
                           {"groups", s.groups}},
                          sw::kMaxExtentParam);
        sw::check_at_most("conv2d",
                          {{"kernel", s.kernel_x},
                           {"kernel_y", s.kernel_y},
                           {"stride", s.stride_x},
                           {"stride_y", s.stride_y},
                           {"dilation", s.dilation_x},
                           {"dilation_y", s.dilation_y},
                           {"pad_left", s.pad_left},
                           {"pad_right", s.pad_right},
                           {"pad_top", s.pad_top},
                           {"pad_bottom", s.pad_bottom}},
                          sw::kMaxWindowParam);
        sw::check_param(s.batch >= 1, "conv2d: batch must be >= 1");
        sw::check_param(s.in_channels >= 1 && s.out_channels >= 1,
                        "conv2d: in_channels and out_channels must be >= 1");
        sw::check_param(s.dilation_x >= 1 && s.dilation_y >= 1, "conv2d: dilations must be >= 1");
        sw::check_param(s.kernel_x >= 1 && s.kernel_y >= 1 && s.stride_x >= 1 && s.stride_y >= 1 &&
                            s.pad_left >= 0 && s.pad_right >= 0 && s.pad_top >= 0 &&
                            s.pad_bottom >= 0,
                        "conv2d: kernel and stride must be >= 1 and pads >= 0");
        sw::check_param(s.groups >= 1 && s.in_channels % s.groups == 0 &&
                            s.out_channels % s.groups == 0,
                        "conv2d: groups (" + std::to_string(s.groups) +
                            ") must divide in_channels and out_channels");
        sw::check_param(s.height >= 1 && s.width >= 1, "conv2d: height and width must be >= 1");
        sw::check_param(s.height + s.pad_top + s.pad_bottom >= s.span_y() &&
                            s.width + s.pad_left + s.pad_right >= s.span_x(),
                        "conv2d: the kernel (" + std::to_string(s.span_x()) + "x" +
                            std::to_string(s.span_y()) +
                            (s.dilation_x > 1 || s.dilation_y > 1 ? " with its dilations" : "") +
                            ") is larger than the padded input (" +
                            std::to_string(s.width + s.pad_left + s.pad_right) + "x" +
                            std::to_string(s.height + s.pad_top + s.pad_bottom) + ")");

        /* THE ALGORITHM */
        // Zero padding, written without Halide's BoundaryConditions, whose likely() tags
        // make Halide split the staging loops into edge and interior pieces. A pointwise conv
        // whose rows are not whole vectors (a 7x7 map seen as one row of 49 pixels) reads its
        // input through the same zero extension, so that a vector may run past the row's end
        // (into zeros, its lanes never stored) instead of shrinking the tiles to whole vectors.
        // With a prologue the window is a computed Func (the prologue's values, zero outside
        // the image), computed once per staged element by the schedules; without padding it
        // has no select, so that it may run on floatv4.
        const bool padded_input = s.pad_left || s.pad_right || s.pad_top || s.pad_bottom ||
                                  (s.kernel_x == 1 && s.stride_x == 1 && s.out_width() % 4 != 0);
        auto with_prologue = [&](Expr v) {
            if (!s.prologue)
                return v;
            v = v * (*pre_scale)(c) + (*pre_shift)(c);
            return std::string(prologue) == "scale_shift_relu" ? max(v, 0.f) : v;
        };
        if (padded_input) {
            Expr inside = x >= 0 && x < s.width && y >= 0 && y < s.height;
            padded(x, y, c, n) = select(
                inside,
                with_prologue(input(clamp(x, 0, s.width - 1), clamp(y, 0, s.height - 1), c, n)),
                0.f);
        } else if (s.prologue) {
            padded(x, y, c, n) = with_prologue(input(x, y, c, n));
        } else {
            padded = Func(input);
        }
        has_padding = padded_input;
        r = RDom(0, s.kernel_x, 0, s.kernel_y, 0, s.in_per_group(), "r");
        Expr in_c = r.z;
        if (s.groups > 1)
            in_c = (c / s.out_per_group()) * s.in_per_group() + r.z;
        conv(x, y, c, n) = bias(c);
        conv(x, y, c, n) += weights(r.x, r.y, r.z, c) *
                            padded(x * s.stride_x + r.x * s.dilation_x - s.pad_left,
                                   y * s.stride_y + r.y * s.dilation_y - s.pad_top, in_c, n);
        if (residual_input)
            conv(x, y, c, n) += (*residual_input)(x, y, c, n);
        sw::check_param(relu_max >= 0 && (relu || relu_max == 0),
                        "conv2d: relu_max must be >= 0, and > 0 only with relu=true");
        if (relu && relu_max > 0)
            conv(x, y, c, n) = clamp(conv(x, y, c, n), 0.f, float(relu_max));
        else if (relu)
            conv(x, y, c, n) = max(conv(x, y, c, n), 0.f);
        const std::string act = activation;
        sw::check_param(act == "none" || act == "hard_sigmoid" || act == "hard_swish",
                        "conv2d: activation must be none, hard_sigmoid or hard_swish, not '" + act +
                            "'");
        sw::check_param(act == "none" || !relu, "conv2d: activation=" + act + " needs relu=false");
        sw::check_param(std::isfinite(float(alpha)) && std::isfinite(float(beta)),
                        "conv2d: alpha and beta must be finite");
        if (act != "none") {
            Expr v = conv(x, y, c, n);
            Expr h = max(min(float(alpha) * v + float(beta), 1.f), 0.f);
            conv(x, y, c, n) = act == "hard_swish" ? v * h : h;
        }
        output(x, y, c, n) = conv(x, y, c, n);

        sw::set_dense_shape(input, {s.width, s.height, s.in_channels, s.batch},
                            {"width", "height", "in_channels", "batch"});
        sw::set_dense_shape(weights, {s.kernel_x, s.kernel_y, s.in_per_group(), s.out_channels},
                            {"kernel", "kernel_y", "in_channels", "out_channels"});
        sw::set_dense_shape(bias, {s.out_channels}, {"out_channels"});
        sw::set_dense_shape(output, {s.out_width(), s.out_height(), s.out_channels, s.batch},
                            {"width", "height", "out_channels", "batch"});
        if (residual_input) {
            sw::set_dense_shape(*residual_input,
                                {s.out_width(), s.out_height(), s.out_channels, s.batch},
                                {"width", "height", "out_channels", "batch"});
        }
        if (pre_scale) {
            sw::set_dense_shape(*pre_scale, {s.in_channels}, {"in_channels"});
            sw::set_dense_shape(*pre_shift, {s.in_channels}, {"in_channels"});
        }
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::Conv2DStages st{output,      conv, input, weights, bias, padded,
                                   has_padding, x,    y,     c,       n,    r};
        if (residual_input)
            st.residual = *residual_input;
        if (pre_scale) {
            st.pre_scale = *pre_scale;
            st.pre_shift = *pre_shift;
        }
        apply_schedule(
            [&] {
                sw::check_param(tile_x >= 0 && tile_y >= 0 && tile_c >= 0 && tile_ci >= 0,
                                "conv2d: tile sizes must be >= 0 (0 = chosen by the schedule)");
                sw::check_param(tile_ci == 0 || shape().in_per_group() % int(tile_ci) == 0,
                                "conv2d: tile_ci (" + std::to_string(tile_ci) +
                                    ") must divide in_channels per group (" +
                                    std::to_string(shape().in_per_group()) + ")");
                schedules::schedule_conv2d_sunway(st, shape(), target_machine(),
                                                  {tile_x, tile_y, tile_c, tile_ci});
            },
            [&] { schedules::schedule_conv2d_baseline(st, shape(), target_machine()); },
            [&] { schedules::schedule_conv2d_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func conv{"conv"}, padded{"padded"};
    bool has_padding = false;
    RDom r;
    Input<Buffer<float>> *residual_input = nullptr;
    Input<Buffer<float>> *pre_scale = nullptr, *pre_shift = nullptr;

    schedules::Conv2DShape shape() const {
        return {batch,
                in_channels,
                out_channels,
                height,
                width,
                kernel,
                layers::or_default(kernel_y, kernel, 0),
                stride,
                layers::or_default(stride_y, stride, 0),
                layers::or_default(pad_left, pad, -1),
                layers::or_default(pad_right, pad, -1),
                layers::or_default(pad_top, pad, -1),
                layers::or_default(pad_bottom, pad, -1),
                groups,
                dilation,
                layers::or_default(dilation_y, dilation, 0),
                residual,
                std::string(prologue) != "none"};
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Conv2D, conv2d)
