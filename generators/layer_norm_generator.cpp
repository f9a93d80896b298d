/** \file
 * layer_norm: ONNX LayerNormalization over the last axis of a (size, rows) tensor: for each
 * row, mean = sum(x) / size, var = sum((x - mean)^2) / size,
 * out(x, r) = (in(x, r) - mean) / sqrt(var + epsilon) * scale(x) + bias(x).
 * Inputs input (size, rows), scale (size), bias (size); output (size, rows).
 * Schedules: schedules/layer_norm_schedule.h.
 */
#include "generators/LayerGenerator.h"
#include "schedules/layer_norm_schedule.h"

namespace {

using namespace Halide;

class LayerNorm : public layers::LayerGenerator<LayerNorm> {
public:
    GeneratorParam<int> rows{"rows", 1};
    GeneratorParam<int> size{"size", 64};
    GeneratorParam<float> epsilon{"epsilon", 1e-5f};

    Input<Buffer<float>> input{"input", 2};    // x, w (row)
    Input<Buffer<float>> scale{"scale", 1};    // x
    Input<Buffer<float>> bias{"bias", 1};      // x
    Output<Buffer<float>> output{"output", 2}; // x, w

    void generate() {
        sw::check_param(rows >= 1 && size >= 1, "layer_norm: rows and size must be >= 1");
        sw::check_param(float(epsilon) >= 0.f, "layer_norm: epsilon must be >= 0");
        /* THE ALGORITHM */
        r = RDom(0, int(size), "r");
        const float inv = 1.0f / float(int(size));
        mean(w) = 0.f;
        mean(w) += input(r, w);
        mean(w) = mean(w) * inv;
        var(w) = 0.f;
        const Expr d = input(r, w) - mean(w);
        var(w) += d * d;
        rstd(w) = 1.0f / sqrt(var(w) * inv + epsilon);
        norm(x, w) = (input(x, w) - mean(w)) * rstd(w) * scale(x) + bias(x);
        output(x, w) = norm(x, w);

        sw::set_dense_shape(input, {size, rows}, {"size", "rows"});
        sw::set_dense_shape(scale, {size}, {"size"});
        sw::set_dense_shape(bias, {size}, {"size"});
        sw::set_dense_shape(output, {size, rows}, {"size", "rows"});
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::LayerNormStages st{output, norm, mean, var, rstd, input, scale, bias, x, w, r};
        apply_schedule(
            [&] {
                check_row_fits();
                schedules::schedule_layer_norm_sunway(st, rows, size, target_machine());
            },
            [&] {
                check_row_fits();
                schedules::schedule_layer_norm_baseline(st, target_machine());
            },
            [&] { schedules::schedule_layer_norm_cpu(st); });
    }

private:
    Var x{"x"}, w{"w"};
    Func mean{"mean"}, var{"var"}, rstd{"rstd"}, norm{"norm"};
    RDom r;

    /** The hand and baseline schedules stage a whole row in LDM. */
    void check_row_fits() const {
        const int64_t need = schedules::layer_norm_ldm_bytes(size, 1),
                      budget = schedules::layer_norm_budget(target_machine());
        sw::check_param(need <= budget,
                        "layer_norm: a row of size=" + std::to_string(int(size)) + " needs " +
                            std::to_string(need) + " bytes of LDM, more than the " +
                            std::to_string(budget) + " a " + target_machine().name +
                            " CPE has for it; use the autoscheduler (auto_schedule=true)");
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(LayerNorm, layer_norm)
