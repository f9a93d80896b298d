/** \file
 * A test-only generator that stages a 3-D tile in LDM in different ways, so that every
 * DMA path of InjectDma runs on the emulator: "strided" (one strided request per
 * channel), "transposed" (the staging loops reordered: one request per element),
 * "direct" (nothing staged: direct main-memory loads and stores from the CPEs).
 * out(x, y, c) = in(x, y, c) * 2 + 1 on a width x height x channels float buffer.
 */
#include "Halide.h"
#include "target_sw/GeneratorSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

namespace {

using namespace Halide;

class Staging : public Generator<Staging> {
public:
    GeneratorParam<int> width{"width", 37};
    GeneratorParam<int> height{"height", 11};
    GeneratorParam<int> channels{"channels", 3};
    GeneratorParam<std::string> staging{"staging", "strided"};
    GeneratorParam<std::string> machine{"machine", "sw26010"};
    Input<Buffer<float>> input{"input", 3};
    Output<Buffer<float>> output{"output", 3};

    void generate() {
        Var x("x"), y("y"), c("c"), xo("xo"), yo("yo"), xi("xi"), yi("yi"), t("t");
        Func scaled("scaled");
        scaled(x, y, c) = input(x, y, c) * 2.f + 1.f;
        output(x, y, c) = scaled(x, y, c);
        sw::set_dense_shape(input, {width, height, channels});
        sw::set_dense_shape(output, {width, height, channels});

        output.tile(x, y, xo, yo, xi, yi, 8, 4)
            .reorder(xi, yi, c, xo, yo)
            .fuse(xo, yo, t)
            .gpu_blocks(t, DeviceAPI::Host);
        const std::string how = staging;
        if (how == "direct")
            return;
        scaled.compute_at(output, t).store_in(sw::LDM);
        Func staged = input.in();
        staged.compute_at(output, t).store_in(sw::LDM);
        if (how == "transposed") {
            staged.reorder(Var("_2"), Var("_1"), Var("_0"));
        } else {
            sw::check_param(how == "strided", "staging must be strided, transposed or direct");
        }
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Staging, staging)

namespace {

/** An element-wise residual add, out(x, y, c) = a(x, y, c) + b(x, y, c), with no stage between
 * the inputs and the output: the shape of pipeline whose output the autoscheduler must stage
 * through the LDM rather than write element by element (tests/autoschedule_random_test.cpp).
 * Scheduled only by the autoscheduler (auto_schedule=true). */
class EltwiseAdd : public Generator<EltwiseAdd> {
public:
    GeneratorParam<int> width{"width", 56};
    GeneratorParam<int> height{"height", 56};
    GeneratorParam<int> channels{"channels", 64};
    GeneratorParam<std::string> machine{"machine", "sw26010"};
    Input<Buffer<float>> a{"a", 3};
    Input<Buffer<float>> b{"b", 3};
    Output<Buffer<float>> output{"output", 3};

    void generate() {
        Var x("x"), y("y"), c("c");
        output(x, y, c) = a(x, y, c) + b(x, y, c);
        for (auto *in : {&a, &b})
            sw::set_dense_shape(*in, {width, height, channels});
        sw::set_dense_shape(output, {width, height, channels});
        sw::check_param(get_auto_schedule(),
                        "eltwise_add is scheduled by the autoscheduler only (auto_schedule=true)");
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(EltwiseAdd, eltwise_add)
