/** \file
 * eltwise: out = a + b, a - b, a * b, a / b, pow(a, b) (ONNX Add / Sub / Mul / Div / Pow;
 * op=add|sub|mul|div|pow, pow as C's powf) or b != 0 ? a : fill (op=select, fill=F: ONNX Where
 * with a constant mask and a scalar, masked_fill) on 4-D NCHW float32 tensors (Halide dims
 * x, y, c, n) with numpy broadcasting: each dimension of a and of b equals the output's or
 * is 1 (a residual add: both full; x times a per-channel scale: b of shape 1xCx1x1).
 * Optional fused activation after the operation: activation=relu (a residual block's
 * add + ReLU in one pass).
 *   batch channels height width          the output's shape
 *   a_batch a_channels a_height a_width  a's shape, 0 = the output's (default)
 *   b_batch b_channels b_height b_width  b's shape, 0 = the output's (default)
 */
#include "generators/LayerGenerator.h"
#include "schedules/pointwise_schedule.h"

#include <cmath>
#include <cstdlib>

namespace {

using namespace Halide;

class Eltwise : public layers::LayerGenerator<Eltwise> {
public:
    GeneratorParam<std::string> op{"op", "add"}; ///< add, sub, mul, div, pow or select
    /** op=select: out = b != 0 ? a : fill (ONNX Where with a constant mask and a scalar:
     * masked_fill). A number, inf or -inf. */
    GeneratorParam<std::string> fill{"fill", "0"};
    GeneratorParam<std::string> activation{"activation", "none"}; ///< none or relu
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> channels{"channels", 4};
    GeneratorParam<int> height{"height", 8};
    GeneratorParam<int> width{"width", 8};
    GeneratorParam<int> a_batch{"a_batch", 0};
    GeneratorParam<int> a_channels{"a_channels", 0};
    GeneratorParam<int> a_height{"a_height", 0};
    GeneratorParam<int> a_width{"a_width", 0};
    GeneratorParam<int> b_batch{"b_batch", 0};
    GeneratorParam<int> b_channels{"b_channels", 0};
    GeneratorParam<int> b_height{"b_height", 0};
    GeneratorParam<int> b_width{"b_width", 0};

    Input<Buffer<float>> a{"a", 4};
    Input<Buffer<float>> b{"b", 4};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        const std::string kind = op, act = activation;
        sw::check_param(kind == "add" || kind == "sub" || kind == "mul" || kind == "div" ||
                            kind == "pow" || kind == "select",
                        "eltwise: op must be add, sub, mul, div, pow or select, not '" + kind +
                            "'");
        const std::string fill_text = fill;
        char *end = nullptr;
        const float fill_value = std::strtof(fill_text.c_str(), &end);
        sw::check_param(!fill_text.empty() && end && *end == '\0' && !std::isnan(fill_value),
                        "eltwise: fill must be a number, inf or -inf, not '" + fill_text + "'");
        sw::check_param(act == "none" || act == "relu",
                        "eltwise: activation must be none or relu, not '" + act + "'");
        sw::check_param(batch >= 1 && channels >= 1 && height >= 1 && width >= 1,
                        "eltwise: batch, channels, height and width must be >= 1");
        const std::vector<int> out = {width, height, channels, batch};
        const std::vector<int> ad = dims("a", {a_width, a_height, a_channels, a_batch}, out);
        const std::vector<int> bd = dims("b", {b_width, b_height, b_channels, b_batch}, out);

        /* THE ALGORITHM */
        Expr va = a(at(x, ad[0]), at(y, ad[1]), at(c, ad[2]), at(n, ad[3]));
        Expr vb = b(at(x, bd[0]), at(y, bd[1]), at(c, bd[2]), at(n, bd[3]));
        Expr v = kind == "add"   ? va + vb
                 : kind == "sub" ? va - vb
                 : kind == "mul" ? va * vb
                 : kind == "div" ? va / vb
                 : kind == "pow" ? pow(va, vb)
                                 : select(vb != 0.f, va, fill_value);
        if (act == "relu")
            v = max(v, 0.f);
        result(x, y, c, n) = v;
        output(x, y, c, n) = result(x, y, c, n);

        const std::vector<std::string> names = {"width", "height", "channels", "batch"};
        sw::set_dense_shape(a, ad, {"a_width", "a_height", "a_channels", "a_batch"});
        sw::set_dense_shape(b, bd, {"b_width", "b_height", "b_channels", "b_batch"});
        sw::set_dense_shape(output, out, names);
        // A broadcast input is staged with one value per channel (1xCx1x1) or, at most, one
        // per output point.
        auto per_channel = [&](const std::vector<int> &d) {
            return d[0] == 1 && d[1] == 1 && d[3] == 1;
        };
        const int channel_inputs = per_channel(ad) + per_channel(bd);
        // floatv4 on the CPE: + - * only (no vector division or select; powf is scalar).
        const bool vectorizable =
            act == "none" && kind != "div" && kind != "pow" && kind != "select";
        shape_ = {batch,          channels,     height, width, 2 - channel_inputs,
                  channel_inputs, vectorizable, false};
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::PointwiseStages st{output, result, {a, b}, x, y, c, n};
        apply_schedule(
            [&] { schedules::schedule_pointwise_sunway(st, shape_, target_machine()); },
            [&] { schedules::schedule_pointwise_baseline(st, shape_, target_machine()); },
            [&] { schedules::schedule_pointwise_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func result{"result"};
    schedules::PointwiseShape shape_{};

    /** An input's extents: each given one (0: the output's) must be 1 or the output's. */
    static std::vector<int> dims(const std::string &name, const std::vector<int> &given,
                                 const std::vector<int> &out) {
        static const char *const dim_names[] = {"width", "height", "channels", "batch"};
        std::vector<int> d(4);
        for (int i = 0; i < 4; i++) {
            d[i] = given[i] == 0 ? out[i] : given[i];
            sw::check_param(d[i] == 1 || d[i] == out[i],
                            "eltwise: " + name + "_" + dim_names[i] + " (" +
                                std::to_string(given[i]) + ") must be 1 or the output's " +
                                dim_names[i] + " (" + std::to_string(out[i]) +
                                ") (numpy broadcasting)");
        }
        return d;
    }
    /** The index along a dimension of extent \p extent: 0 where it is broadcast. */
    static Expr at(const Var &v, int extent) { return extent == 1 ? Expr(0) : Expr(v); }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Eltwise, eltwise)
