/** \file
 * pool: 2-D max or average pooling, NCHW float32 (Halide dims x, y, c, n), with kernel,
 * stride, padding per side and ceil mode (PyTorch's rule: the last window must start inside
 * the input or its left padding). Max pooling ignores padding. Average pooling divides by
 * the window's positions inside the input, or inside the padded input with
 * count_include_pad.
 */
#include "generators/LayerGenerator.h"
#include "schedules/pool_schedule.h"

#include <limits>

namespace {

using namespace Halide;

class Pool : public layers::LayerGenerator<Pool> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> channels{"channels", 4};
    GeneratorParam<int> height{"height", 16};
    GeneratorParam<int> width{"width", 16};
    GeneratorParam<int> kernel{"kernel", 2};
    GeneratorParam<int> kernel_y{"kernel_y", 0}; ///< 0: same as kernel
    GeneratorParam<int> stride{"stride", 2};
    GeneratorParam<int> stride_y{"stride_y", 0}; ///< 0: same as stride
    GeneratorParam<int> pad{"pad", 0};
    GeneratorParam<int> pad_left{"pad_left", -1};
    GeneratorParam<int> pad_right{"pad_right", -1};
    GeneratorParam<int> pad_top{"pad_top", -1};
    GeneratorParam<int> pad_bottom{"pad_bottom", -1};
    GeneratorParam<bool> ceil_mode{"ceil_mode", false};
    GeneratorParam<std::string> type{"type", "max"}; ///< max or avg
    GeneratorParam<bool> count_include_pad{"count_include_pad", false};
    /** Rows of one point of a window (kernel_y 1, no padding along y) with stride_y > 1
     * (a subsample): the input is declared as height / stride_y rows of stride_y * width
     * (the same dense memory), so that a tile stages only the rows it reads (a strided DMA of
     * the first width elements of each) instead of every row between them. Needs height a
     * multiple of stride_y. */
    GeneratorParam<bool> skip_rows{"skip_rows", false};

    Input<Buffer<float>> input{"input", 4};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        const int kx = kernel, ky = layers::or_default(kernel_y, kernel, 0);
        const int sx = stride, sy = layers::or_default(stride_y, stride, 0);
        const int pl = layers::or_default(pad_left, pad, -1),
                  pr = layers::or_default(pad_right, pad, -1);
        const int pt = layers::or_default(pad_top, pad, -1),
                  pb = layers::or_default(pad_bottom, pad, -1);
        const std::string kind = type;
        sw::check_at_most(
            "pool",
            {{"batch", batch}, {"channels", channels}, {"height", height}, {"width", width}},
            sw::kMaxExtentParam);
        sw::check_at_most("pool",
                          {{"kernel", kx},
                           {"kernel_y", ky},
                           {"stride", sx},
                           {"stride_y", sy},
                           {"pad_left", pl},
                           {"pad_right", pr},
                           {"pad_top", pt},
                           {"pad_bottom", pb}},
                          sw::kMaxWindowParam);
        sw::check_param(kind == "max" || kind == "avg",
                        "pool: type must be max or avg, not '" + kind + "'");
        sw::check_param(batch >= 1 && channels >= 1 && height >= 1 && width >= 1,
                        "pool: batch, channels, height and width must be >= 1");
        sw::check_param(kx >= 1 && ky >= 1 && sx >= 1 && sy >= 1 && pl >= 0 && pr >= 0 && pt >= 0 &&
                            pb >= 0,
                        "pool: kernel and stride must be >= 1 and pads >= 0");
        sw::check_param(pl < kx && pr < kx && pt < ky && pb < ky,
                        "pool: padding must be smaller than the kernel");
        ow = out_size(width, kx, sx, pl, pr);
        oh = out_size(height, ky, sy, pt, pb);
        sw::check_param(ow >= 1 && oh >= 1, "pool: the kernel is larger than the padded input");
        // With skip_rows, the rows the windows read are the input's rows (of stride_y * width).
        const int row_step = skip_rows ? sy : 1;
        sw::check_param(!skip_rows || (ky == 1 && pt == 0 && pb == 0 && height % sy == 0),
                        "pool: skip_rows needs kernel_y 1, no padding along y and height a "
                        "multiple of stride_y");
        const int in_w = width * row_step, in_h = height / row_step, step_y = sy / row_step;

        /* THE ALGORITHM */
        const bool is_max = kind == "max";
        const float init = is_max ? -std::numeric_limits<float>::infinity() : 0.f;
        // The padded input, written by hand like conv2d's (one Func over the input, without
        // BoundaryConditions' chain of wrapper Funcs and likely() tags), and only where some
        // window reaches outside the input (padding, or ceil mode's last window).
        const int w = width, h = in_h;
        const bool outside =
            pl || pt || (ow - 1) * sx + kx - pl > w || (oh - 1) * step_y + ky - pt > h;
        Func padded("padded");
        if (outside) {
            Expr inside = x >= 0 && x < w && y >= 0 && y < h;
            padded(x, y, c, n) =
                select(inside, input(clamp(x, 0, w - 1), clamp(y, 0, h - 1), c, n), init);
        } else {
            padded = Func(input);
        }
        RDom r(0, kx, 0, ky, "r");
        Expr v = padded(x * sx + r.x - pl, y * step_y + r.y - pt, c, n);
        pool(x, y, c, n) = init;
        pool(x, y, c, n) = is_max ? max(pool(x, y, c, n), v) : pool(x, y, c, n) + v;
        if (!is_max) {
            // Window positions counted: inside the input, or inside the padded input.
            const int lo_x = count_include_pad ? -pl : 0,
                      hi_x = count_include_pad ? width + pr : width;
            const int lo_y = count_include_pad ? -pt : 0,
                      hi_y = count_include_pad ? height + pb : height;
            Expr x0 = x * sx - pl, y0 = y * sy - pt;
            Expr cx = min(x0 + kx, hi_x) - max(x0, lo_x), cy = min(y0 + ky, hi_y) - max(y0, lo_y);
            pool(x, y, c, n) = pool(x, y, c, n) / cast<float>(max(cx * cy, 1));
        }
        output(x, y, c, n) = pool(x, y, c, n);

        sw::set_dense_shape(input, {in_w, in_h, channels, batch},
                            {skip_rows ? "width * stride_y" : "width",
                             skip_rows ? "height / stride_y" : "height", "channels", "batch"});
        sw::set_dense_shape(output, {ow, oh, channels, batch},
                            {"width", "height", "channels", "batch"});
        shape_ = {batch, channels, in_h, in_w, ow, oh, kx, ky, sx, step_y};
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::PoolStages st{output, pool, input, x, y, c, n};
        apply_schedule([&] { schedules::schedule_pool_sunway(st, shape_, target_machine()); },
                       [&] { schedules::schedule_pool_baseline(st, shape_, target_machine()); },
                       [&] { schedules::schedule_pool_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func pool{"pool"};
    int ow = 0, oh = 0;
    schedules::PoolShape shape_{};

    int out_size(int in, int k, int s, int p0, int p1) const {
        const int span = in + p0 + p1 - k;
        if (span < 0)
            return 0;
        int out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
        if (ceil_mode && (out - 1) * s >= in + p0)
            out--;
        return out;
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Pool, pool)
