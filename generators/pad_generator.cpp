/** \file
 * pad: ONNX Pad of a float32 tensor of rank <= 4, as a 4-D one (the lowering pads lower ranks
 * with leading 1s), in mode constant (any value), reflect or edge; negative pads crop.
 *   shape=d0,d1,d2,d3               the input's ONNX shape, outermost first (each >= 1)
 *   pads=b0,b1,b2,b3,e0,e1,e2,e3    ONNX pads: before each dim, then after each dim
 *   mode=constant|reflect|edge
 *   value                           the constant mode's value (default 0)
 * Input "input" with Halide extents (d3, d2, d1, d0), output "output" with
 * (d3 + b3 + e3, ..., d0 + b0 + e0). reflect mirrors without repeating the edge element
 * (numpy's "reflect"), so its pads must be smaller than the dim; edge repeats the edge
 * element. Pure data movement (no arithmetic).
 */
#include "generators/LayerGenerator.h"
#include "schedules/pad_schedule.h"

#include <sstream>

namespace {

using namespace Halide;

/** \p count integers from "a,b,...", or an error naming \p what. */
std::vector<int> parse_ints(const std::string &text, size_t count, const std::string &what) {
    std::vector<int> v;
    std::stringstream ss(text);
    std::string item;
    const std::string message = "pad: " + what + " must be " + std::to_string(count) +
                                " comma-separated integers, not '" + text + "'";
    while (std::getline(ss, item, ',')) {
        size_t used = 0;
        int x = 0;
        bool ok = !item.empty();
        if (ok) {
            try {
                x = std::stoi(item, &used);
            } catch (const std::exception &) {
                ok = false;
            }
        }
        sw::check_param(ok && used == item.size(), message);
        v.push_back(x);
    }
    sw::check_param(v.size() == count, message);
    return v;
}

class Pad : public layers::LayerGenerator<Pad> {
public:
    GeneratorParam<std::string> shape_param{"shape", "1,1,1,1"};
    GeneratorParam<std::string> pads_param{"pads", "0,0,0,0,0,0,0,0"};
    GeneratorParam<std::string> mode{"mode", "constant"};
    GeneratorParam<float> value{"value", 0.f};

    Input<Buffer<float>> input{"input", 4};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        const std::vector<int> d = parse_ints(shape_param, 4, "shape");
        const std::vector<int> p = parse_ints(pads_param, 8, "pads");
        const std::string m = mode;
        sw::check_param(m == "constant" || m == "reflect" || m == "edge",
                        "pad: mode must be constant, reflect or edge, not '" + m + "'");
        Expr inside; // the constant mode's test that every index is inside (undefined: no test)
        auto also = [&](const Expr &c) { inside = inside.defined() ? inside && c : c; };
        std::vector<Expr> args(4);
        for (int j = 0; j < 4; j++) {
            // Halide dim j is ONNX dim 3 - j.
            const int k = 3 - j, n = d[size_t(k)], b = p[size_t(k)], e = p[size_t(4 + k)];
            const std::string dim = "dim " + std::to_string(k);
            sw::check_param(n >= 1,
                            "pad: shape " + std::string(shape_param) + ": every dim must be >= 1");
            sw::check_param(int64_t(n) + b + e >= 1,
                            "pad: pads " + std::string(pads_param) + " crop all of " + dim);
            sw::check_param(-b < n && -e < n, "pad: pads " + std::string(pads_param) +
                                                  " crop more than the whole of " + dim);
            if (m == "reflect") {
                sw::check_param(b <= n - 1 && e <= n - 1,
                                "pad: reflect pads of " + dim + " (" + std::to_string(b) + ", " +
                                    std::to_string(e) + ") must be smaller than the dim (" +
                                    std::to_string(n) + ")");
            }
            shape_.in[size_t(j)] = n;
            shape_.out[size_t(j)] = n + b + e;
            shape_.begin[size_t(j)] = b;
            shape_.end[size_t(j)] = e;
            /* THE ALGORITHM: the input index i = v - b, brought inside [0, n) by the mode where
             * this dim is padded (only the sides that are: crops need nothing). */
            Expr i = v[size_t(j)] - b, src = i;
            if (m == "reflect") {
                // |i| mirrors the begin about 0, then min(i, 2 (n - 1) - i) the end about n - 1.
                if (b > 0)
                    src = max(src, -src);
                if (e > 0)
                    src = min(src, 2 * (n - 1) - src);
            }
            if (b > 0)
                src = max(src, 0);
            if (e > 0)
                src = min(src, n - 1);
            if (m == "constant") {
                if (b > 0)
                    also(i >= 0);
                if (e > 0)
                    also(i < n);
            }
            args[size_t(j)] = src;
        }
        result(v) = inside.defined() ? select(inside, input(args), value) : input(args);
        output(v) = result(v);
        sw::set_dense_shape(input, {shape_.in[0], shape_.in[1], shape_.in[2], shape_.in[3]});
        sw::set_dense_shape(output, {shape_.out[0], shape_.out[1], shape_.out[2], shape_.out[3]});
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::TransposeStages st{output, result, input, v};
        apply_schedule([&] { schedules::schedule_pad_sunway(st, shape_, target_machine()); },
                       [&] { schedules::schedule_pad_baseline(st, shape_); },
                       [&] { schedules::schedule_pad_cpu(st); });
    }

private:
    std::vector<Var> v{Var("x"), Var("y"), Var("z"), Var("w")};
    Func result{"result"};
    schedules::PadShape shape_{};
};

} // namespace

HALIDE_REGISTER_GENERATOR(Pad, pad)
