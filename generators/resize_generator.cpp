/** \file
 * resize: 2-D spatial resize of an NCHW float32 tensor (ONNX Resize and Upsample; PyTorch's
 * F.interpolate with mode nearest or bilinear), Halide dims (x, y, c, n):
 *   batch channels in_height in_width out_height out_width
 *   mode        nearest | linear (bilinear)
 *   coordinate  ONNX coordinate_transformation_mode, the source coordinate of output pixel x:
 *               half_pixel          (x + 0.5) / scale - 0.5
 *               pytorch_half_pixel  the same, 0 when length <= 1
 *               align_corners       x * (in - 1) / (length - 1), 0 when length is 1
 *               (length: out, or in * scale, not rounded, when a scale is given, as ONNX's
 *               reference computes length_resized)
 *               asymmetric          x / scale
 *               tf_half_pixel_for_nn (x + 0.5) / scale
 *   nearest_mode  (mode=nearest) the input pixel of a source coordinate s:
 *               round_prefer_floor (ceil(s - 0.5)), round_prefer_ceil (floor(s + 0.5)),
 *               floor, ceil; clamped to [0, in - 1]
 *   scale_y scale_x  ONNX's scale (output / input size) of each axis; 0 = out / in (the
 *               Resize gave sizes). A Resize with scales gives the scale itself, which need
 *               not be out / in (out = floor(in * scale)).
 * linear: s's two neighbours floor(s) and floor(s) + 1, each clamped to [0, in - 1] (the
 * edge repeated, as ONNX pads and PyTorch clamps), weighted 1 - l and l, l = s - floor(s);
 * along x then y. Coordinates are computed in double, as ONNX's reference does.
 */
#include "generators/LayerGenerator.h"
#include "schedules/resize_schedule.h"

#include <cmath>

namespace {

using namespace Halide;

class Resize : public layers::LayerGenerator<Resize> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> channels{"channels", 1};
    GeneratorParam<int> in_height{"in_height", 4};
    GeneratorParam<int> in_width{"in_width", 4};
    GeneratorParam<int> out_height{"out_height", 8};
    GeneratorParam<int> out_width{"out_width", 8};
    GeneratorParam<std::string> mode{"mode", "nearest"};
    GeneratorParam<std::string> coordinate{"coordinate", "half_pixel"};
    GeneratorParam<std::string> nearest_mode{"nearest_mode", "round_prefer_floor"};
    GeneratorParam<double> scale_y{"scale_y", 0.0};
    GeneratorParam<double> scale_x{"scale_x", 0.0};

    Input<Buffer<float>> input{"input", 4};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        sw::check_at_most("resize",
                          {{"batch", batch},
                           {"channels", channels},
                           {"in_height", in_height},
                           {"in_width", in_width},
                           {"out_height", out_height},
                           {"out_width", out_width}},
                          sw::kMaxExtentParam);
        sw::check_param(batch >= 1 && channels >= 1 && in_height >= 1 && in_width >= 1 &&
                            out_height >= 1 && out_width >= 1,
                        "resize: batch, channels, in_height, in_width, out_height and out_width "
                        "must be >= 1");
        const std::string m = mode, ct = coordinate, nm = nearest_mode;
        sw::check_param(m == "nearest" || m == "linear",
                        "resize: mode must be nearest or linear, not '" + m + "'");
        sw::check_param(ct == "half_pixel" || ct == "pytorch_half_pixel" || ct == "align_corners" ||
                            ct == "asymmetric" || ct == "tf_half_pixel_for_nn",
                        "resize: coordinate must be half_pixel, pytorch_half_pixel, "
                        "align_corners, asymmetric or tf_half_pixel_for_nn, not '" +
                            ct + "'");
        sw::check_param(nm == "round_prefer_floor" || nm == "round_prefer_ceil" || nm == "floor" ||
                            nm == "ceil",
                        "resize: nearest_mode must be round_prefer_floor, round_prefer_ceil, "
                        "floor or ceil, not '" +
                            nm + "'");
        const double sy = scale_y, sx = scale_x;
        sw::check_param(std::isfinite(sy) && std::isfinite(sx) && sy >= 0 && sx >= 0,
                        "resize: scale_y and scale_x must be finite and >= 0 (0 = output / "
                        "input size)");

        /* THE ALGORITHM */
        const Axis ax{in_width, out_width, sx > 0 ? sx : double(int(out_width)) / in_width,
                      sx > 0 ? in_width * sx : double(int(out_width))};
        const Axis ay{in_height, out_height, sy > 0 ? sy : double(int(out_height)) / in_height,
                      sy > 0 ? in_height * sy : double(int(out_height))};
        Expr u = source(ax, x), v = source(ay, y);
        if (m == "nearest") {
            result(x, y, c, n) = input(nearest(ax, u), nearest(ay, v), c, n);
        } else {
            Expr fx = floor_int(u), fy = floor_int(v);
            Expr lx = cast<float>(u - cast<double>(fx)), ly = cast<float>(v - cast<double>(fy));
            Expr x0 = clamp(fx, 0, ax.in - 1), x1 = clamp(fx + 1, 0, ax.in - 1);
            Expr y0 = clamp(fy, 0, ay.in - 1), y1 = clamp(fy + 1, 0, ay.in - 1);
            Expr top = (1.f - lx) * input(x0, y0, c, n) + lx * input(x1, y0, c, n);
            Expr bottom = (1.f - lx) * input(x0, y1, c, n) + lx * input(x1, y1, c, n);
            result(x, y, c, n) = (1.f - ly) * top + ly * bottom;
        }
        output(x, y, c, n) = result(x, y, c, n);

        sw::set_dense_shape(input, {in_width, in_height, channels, batch},
                            {"in_width", "in_height", "channels", "batch"});
        sw::set_dense_shape(output, {out_width, out_height, channels, batch},
                            {"out_width", "out_height", "channels", "batch"});
        shape_ = {batch, channels, in_height, in_width, out_height, out_width};
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::ResizeStages st{output, result, input, x, y, c, n};
        apply_schedule([&] { schedules::schedule_resize_sunway(st, shape_, target_machine()); },
                       [&] { schedules::schedule_resize_baseline(st, shape_); },
                       [&] { schedules::schedule_resize_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func result{"result"};
    schedules::ResizeShape shape_{};

    struct Axis {
        int in, out;
        double scale; ///< ONNX's scale: output / input size, or the Resize's given scale
        /** ONNX's length_resized: in * scale, not rounded, when a scale is given (the ONNX
         * reference's align_corners and pytorch_half_pixel use it), else out. */
        double length;
    };

    /** The source coordinate of output pixel \p o along an axis (double). */
    Expr source(const Axis &a, const Var &o) const {
        const std::string ct = coordinate;
        Expr f = cast<double>(o);
        if (ct == "align_corners") {
            if (a.length == 1)
                return Expr(0.0);
            return f * Expr(double(a.in - 1)) / Expr(a.length - 1);
        }
        if (ct == "asymmetric")
            return f / Expr(a.scale);
        if (ct == "tf_half_pixel_for_nn")
            return (f + Expr(0.5)) / Expr(a.scale);
        if (ct == "pytorch_half_pixel" && a.length <= 1)
            return Expr(0.0);
        return (f + Expr(0.5)) / Expr(a.scale) - Expr(0.5); // half_pixel, pytorch_half_pixel
    }

    /** floor(t) as an int32, for t > -4 (every coordinate here is >= -1): the truncation of
     * t + 4, less 4. Halide's simplifier folds a cast of a constant double but not floor_f64,
     * and the LDM buffers' constant bounds are found by substituting each tile's position
     * and simplifying (target_sw/ConstantBounds.h). */
    static Expr floor_int(const Expr &t) { return cast<int>(t + Expr(4.0)) - 4; }

    /** ceil(t) as an int32, for t > -4. */
    static Expr ceil_int(const Expr &t) {
        Expr f = floor_int(t);
        return select(cast<double>(f) < t, f + 1, f);
    }

    /** The input pixel nearest_mode picks for source coordinate \p s, clamped. */
    Expr nearest(const Axis &a, const Expr &s) const {
        const std::string nm = nearest_mode;
        Expr k = nm == "round_prefer_floor"  ? ceil_int(s - Expr(0.5))
                 : nm == "round_prefer_ceil" ? floor_int(s + Expr(0.5))
                 : nm == "floor"             ? floor_int(s)
                                             : ceil_int(s);
        return clamp(k, 0, a.in - 1);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Resize, resize)
