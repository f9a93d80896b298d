/** \file
 * transpose: any permutation of a tensor of rank <= 4 (ONNX Transpose), as a 4-D one (the
 * lowering pads lower ranks with leading 1s).
 *   shape=d0,d1,d2,d3   the input's ONNX shape, outermost first (four values, each >= 1)
 *   perm=p0,p1,p2,p3    ONNX perm: output dim i is input dim perm[i] (a permutation of 0..3)
 * Input "input" with Halide extents (d3, d2, d1, d0) (x fastest), output "output" with
 * (o3, o2, o1, o0), o_i = d_{perm[i]}. Pure data movement (no arithmetic).
 */
#include "generators/LayerGenerator.h"
#include "schedules/transpose_schedule.h"

#include <sstream>

namespace {

using namespace Halide;

/** Four integers from "a,b,c,d", or an error naming \p what. */
std::array<int, 4> parse_four(const std::string &text, const std::string &what) {
    std::array<int, 4> v{};
    std::stringstream ss(text);
    std::string item;
    int k = 0;
    while (std::getline(ss, item, ',')) {
        size_t used = 0;
        int x = 0;
        bool ok = k < 4 && !item.empty();
        if (ok) {
            try {
                x = std::stoi(item, &used);
            } catch (const std::exception &) {
                ok = false;
            }
        }
        sw::check_param(ok && used == item.size(), "transpose: " + what +
                                                       " must be four integers a,b,c,d, not '" +
                                                       text + "'");
        v[size_t(k++)] = x;
    }
    sw::check_param(k == 4,
                    "transpose: " + what + " must be four integers a,b,c,d, not '" + text + "'");
    return v;
}

class Transpose : public layers::LayerGenerator<Transpose> {
public:
    GeneratorParam<std::string> shape_param{"shape", "1,1,1,1"};
    GeneratorParam<std::string> perm_param{"perm", "0,1,2,3"};

    Input<Buffer<float>> input{"input", 4};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        const std::array<int, 4> d = parse_four(shape_param, "shape");
        const std::array<int, 4> p = parse_four(perm_param, "perm");
        for (int i = 0; i < 4; i++)
            sw::check_param(d[size_t(i)] >= 1, "transpose: shape " + std::string(shape_param) +
                                                   ": every dim must be >= 1");
        std::array<bool, 4> seen{};
        for (int i = 0; i < 4; i++) {
            const int q = p[size_t(i)];
            sw::check_param(q >= 0 && q < 4 && !seen[size_t(q)],
                            "transpose: perm " + std::string(perm_param) +
                                " is not a permutation of 0,1,2,3");
            seen[size_t(q)] = true;
        }
        /* THE ALGORITHM: output Halide dim j is ONNX output dim 3 - j, i.e. ONNX input dim
         * perm[3 - j], i.e. the input's Halide dim 3 - perm[3 - j]. */
        std::vector<Expr> args(4);
        for (int j = 0; j < 4; j++) {
            const int k = 3 - p[size_t(3 - j)];
            args[size_t(k)] = v[size_t(j)];
            shape_.out[size_t(j)] = d[size_t(p[size_t(3 - j)])];
            shape_.source[size_t(j)] = k;
        }
        result(v) = input(args);
        output(v) = result(v);
        sw::set_dense_shape(input, {d[3], d[2], d[1], d[0]});
        sw::set_dense_shape(output, {shape_.out[0], shape_.out[1], shape_.out[2], shape_.out[3]});
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::TransposeStages st{output, result, input, v};
        apply_schedule([&] { schedules::schedule_transpose_sunway(st, shape_, target_machine()); },
                       [&] { schedules::schedule_transpose_baseline(st, shape_); },
                       [&] { schedules::schedule_transpose_cpu(st); });
    }

private:
    std::vector<Var> v{Var("x"), Var("y"), Var("z"), Var("w")};
    Func result{"result"};
    schedules::TransposeShape shape_{};
};

} // namespace

HALIDE_REGISTER_GENERATOR(Transpose, transpose)
