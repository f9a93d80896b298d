/** \file
 * activation: out(i) = f(in(i)) on a flat tensor of `size` floats (any tensor, flattened).
 * Also registered as `relu` (op defaults to relu), the name the network tables use:
 *   op=relu        max(v, 0)
 *   op=clip        min(max(v, min), max)   (ReLU6: min=0 max=6; a bound not given is none;
 *                  min > max gives max, as ONNX's Clip)
 *   op=leaky_relu  v < 0 ? alpha * v : v
 *   op=sigmoid     1 / (1 + exp(-v))
 *   op=hard_sigmoid  max(0, min(1, alpha * v + beta))   (ONNX HardSigmoid; give alpha,
 *                  ONNX's default is 0.2; beta defaults to 0.5)
 *   op=hard_swish  v * max(0, min(1, alpha * v + beta))   (ONNX HardSwish: alpha=1/6,
 *                  beta=0.5; also a HardSigmoid followed by a Mul of its input)
 *   op=tanh        tanh(v)   (tanhf on the CPE)
 *   op=erf         erf(v)    (a rational function, |error| < 4e-7: generators/ActivationMath.h)
 *   op=gelu        0.5 v (1 + erf(v / sqrt 2))   (PyTorch's default GELU)
 *   op=gelu_tanh   0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3)))   (GELU, approximate='tanh')
 *   op=sqrt        sqrt(v)   (sqrtf on the CPE; ONNX Sqrt)
 * A NaN in gives NaN out (min and max keep NaN, as PyTorch's).
 */
#include "generators/ActivationMath.h"
#include "generators/LayerGenerator.h"
#include "schedules/elementwise_schedule.h"

#include <limits>

namespace {

using namespace Halide;

class Activation : public layers::LayerGenerator<Activation> {
public:
    GeneratorParam<std::string> op{"op", "relu"};
    GeneratorParam<int> size{"size", 64};
    GeneratorParam<float> min_value{"min", -std::numeric_limits<float>::infinity()};
    GeneratorParam<float> max_value{"max", std::numeric_limits<float>::infinity()};
    GeneratorParam<float> alpha{"alpha", 0.01f};
    GeneratorParam<float> beta{"beta", 0.5f};

    Input<Buffer<float>> input{"input", 1};
    Output<Buffer<float>> output{"output", 1};

    void generate() {
        const std::string kind = op;
        sw::check_param(size >= 1, std::string(op) + ": size must be >= 1");
        /* THE ALGORITHM */
        Expr v = input(i);
        if (kind == "relu") {
            v = max(v, 0.f);
        } else if (kind == "clip") {
            if (std::isfinite(float(min_value)))
                v = max(v, float(min_value));
            if (std::isfinite(float(max_value)))
                v = min(v, float(max_value));
        } else if (kind == "leaky_relu") {
            v = select(v < 0.f, float(alpha) * v, v);
        } else if (kind == "sigmoid") {
            v = 1.f / (1.f + exp(-v));
        } else if (kind == "hard_sigmoid" || kind == "hard_swish") {
            sw::check_param(std::isfinite(float(alpha)) && std::isfinite(float(beta)),
                            "activation: " + kind + ": alpha and beta must be finite");
            // min before max, as ONNX's max(0, min(1, .)): a NaN stays NaN either way.
            Expr h = max(min(float(alpha) * v + float(beta), 1.f), 0.f);
            v = kind == "hard_swish" ? v * h : h;
        } else if (kind == "tanh" || kind == "erf" || kind == "gelu" || kind == "gelu_tanh") {
            layers::apply_named_activation(kind, v);
        } else if (kind == "sqrt") {
            v = sqrt(v);
        } else {
            throw sw::UserError("activation: op must be relu, clip, leaky_relu, sigmoid, "
                                "hard_sigmoid, hard_swish, tanh, erf, gelu, gelu_tanh or sqrt, "
                                "not '" +
                                kind + "'");
        }
        result(i) = v;
        output(i) = result(i);
        sw::set_dense_shape(input, {size}, {"size"});
        sw::set_dense_shape(output, {size}, {"size"});
    }

    void schedule() {
        /* THE SCHEDULE: chunks of consecutive elements over the CPEs, as relu's (balanced over
         * the CPEs for the arithmetic-heavy ops) */
        schedules::ReluStages st{output, result, input, i};
        const std::string kind = op;
        const bool heavy = kind == "gelu" || kind == "gelu_tanh" || kind == "tanh" ||
                           kind == "erf" || kind == "sqrt";
        apply_schedule([&] { schedules::schedule_relu_sunway(st, size, target_machine(), heavy); },
                       [&] { schedules::schedule_relu_baseline(st, size); },
                       [&] { schedules::schedule_relu_cpu(st); });
    }

private:
    Var i{"i"};
    Func result{"result"};
};

} // namespace

HALIDE_REGISTER_GENERATOR(Activation, activation)
HALIDE_REGISTER_GENERATOR(Activation, relu)
