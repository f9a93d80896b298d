/** \file
 * dense: a fully connected layer, out(o, n) = alpha * sum_i in(i, n) * w(i, o) + beta * bias(o),
 * optionally followed by an activation: relu=true (ReLU), or activation=relu|gelu|gelu_tanh
 * (a transformer MLP's MatMul + Add + GELU in one layer; GELU as in activation's op=gelu,
 * generators/ActivationMath.h). Weights in PyTorch's [out, in] layout (Halide dims i, o), or
 * with weights_layout=in_out in ONNX MatMul's [in, out] (Halide dims o, i: the outputs
 * innermost, so that a plan can run floatv4 along them with the input splatted, as matmul's
 * do); input (i, n) is any tensor flattened per image (NCHW flattening is x fastest).
 */
#include "generators/ActivationMath.h"
#include "generators/LayerGenerator.h"
#include "schedules/dense_schedule.h"

namespace {

using namespace Halide;

class Dense : public layers::LayerGenerator<Dense> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> in_features{"in_features", 16};
    GeneratorParam<int> out_features{"out_features", 8};
    GeneratorParam<bool> relu{"relu", false};
    /// none, relu, gelu or gelu_tanh, after the bias (relu=true is activation=relu)
    GeneratorParam<std::string> activation{"activation", "none"};
    /// out_in (PyTorch's Linear: [out_features, in_features]) or in_out ([in, out])
    GeneratorParam<std::string> weights_layout{"weights_layout", "out_in"};
    GeneratorParam<float> alpha{"alpha", 1.0f};
    GeneratorParam<float> beta{"beta", 1.0f};
    // Hand schedule only: explicit tiles (0 = chosen from the LDM budget) and the input
    // broadcast (auto: when one block holds every image; true: always, an error where the
    // input chunk depends on the block; false: never) and how a broadcast input is shared
    // (sharing: dma = BCAST_MODE between barriers, regcomm = CPE 0's get passed along the mesh
    // by register communication, SW26010 only; see target_sw/BroadcastDma.h).
    GeneratorParam<int> tile_o{"tile_o", 0};
    GeneratorParam<int> tile_n{"tile_n", 0};
    GeneratorParam<int> tile_i{"tile_i", 0};
    GeneratorParam<std::string> broadcast{"broadcast", "auto"};
    GeneratorParam<std::string> sharing{"sharing", "dma"};

    Input<Buffer<float>> input{"input", 2};     // i, n
    Input<Buffer<float>> weights{"weights", 2}; // i, o (weights_layout=in_out: o, i)
    Input<Buffer<float>> bias{"bias", 1};       // o
    Output<Buffer<float>> output{"output", 2};  // o, n

    void generate() {
        const schedules::DenseShape s = shape();
        sw::check_param(s.batch >= 1 && s.in_features >= 1 && s.out_features >= 1,
                        "dense: batch, in_features and out_features must be >= 1");
        const std::string act = activation;
        sw::check_param(act == "none" || act == "relu" || act == "gelu" || act == "gelu_tanh",
                        "dense: activation must be none, relu, gelu or gelu_tanh, not '" + act +
                            "'");
        sw::check_param(!relu || act == "none" || act == "relu",
                        "dense: activation=" + act + " needs relu=false");
        const std::string layout = weights_layout;
        sw::check_param(layout == "out_in" || layout == "in_out",
                        "dense: weights_layout must be out_in or in_out, not '" + layout + "'");
        const bool in_out = layout == "in_out";
        /* THE ALGORITHM */
        r = RDom(0, s.in_features, "r");
        acc(o, n) = 0.f;
        acc(o, n) += (in_out ? weights(o, r) : weights(r, o)) * input(r, n);
        acc(o, n) = acc(o, n) * alpha + bias(o) * beta;
        if (relu || act == "relu")
            acc(o, n) = max(acc(o, n), 0.f);
        else if (act != "none") {
            Expr v = acc(o, n);
            layers::apply_named_activation(act, v);
            acc(o, n) = v;
        }
        output(o, n) = acc(o, n);

        sw::set_dense_shape(input, {s.in_features, s.batch}, {"in_features", "batch"});
        if (in_out) {
            sw::set_dense_shape(weights, {s.out_features, s.in_features},
                                {"out_features", "in_features"});
        } else {
            sw::set_dense_shape(weights, {s.in_features, s.out_features},
                                {"in_features", "out_features"});
        }
        sw::set_dense_shape(bias, {s.out_features}, {"out_features"});
        sw::set_dense_shape(output, {s.out_features, s.batch}, {"out_features", "batch"});
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::DenseStages st{output, acc, input, weights, bias, o, n, r};
        apply_schedule(
            [&] { schedules::schedule_dense_sunway(st, shape(), target_machine(), overrides()); },
            [&] { schedules::schedule_dense_baseline(st, shape(), target_machine()); },
            [&] { schedules::schedule_dense_cpu(st); });
    }

private:
    Var o{"o"}, n{"n"};
    Func acc{"acc"};
    RDom r;

    schedules::DenseShape shape() const { return {batch, in_features, out_features}; }
    schedules::DenseOverrides overrides() const {
        const std::string b = broadcast;
        sw::check_param(b == "auto" || b == "true" || b == "false",
                        "dense: broadcast must be auto, true or false");
        const std::string how = sharing;
        sw::check_param(how == "dma" || how == "regcomm", "dense: sharing must be dma or regcomm");
        sw::check_param(tile_o >= 0 && tile_n >= 0 && tile_i >= 0,
                        "dense: tile_o, tile_n and tile_i must be >= 0");
        return {tile_o, tile_n, tile_i,
                b == "auto"   ? -1
                : b == "true" ? 1
                              : 0,
                how == "dma" ? sw::Sharing::Dma : sw::Sharing::RegComm};
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Dense, dense)
