/** \file
 * A user's own layer: a scaled residual connection,
 *   out(x, y, c, n) = input(x, y, c, n) + scale(c) * residual(x, y, c, n)
 * (NCHW float32, Halide dims x, y, c, n), with a hand Sunway schedule.
 * It uses only the installed package (HalideSunway): Halide, the shape helper of
 * target_sw/GeneratorSupport.h and sw::LDM. It declares no `machine` GeneratorParam (the
 * driver only sets one when a generator declares it); its tiles are sized for the smaller
 * LDM of the SW26010 (64 KB per CPE), which also fits the SW26010-Pro.
 */
#include "Halide.h"
#include "target_sw/GeneratorSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

#include <algorithm>

namespace {

using namespace Halide;

class ScaledResidual : public Generator<ScaledResidual> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> channels{"channels", 8};
    GeneratorParam<int> height{"height", 16};
    GeneratorParam<int> width{"width", 16};

    Input<Buffer<float>> input{"input", 4};
    Input<Buffer<float>> scale{"scale", 1};
    Input<Buffer<float>> residual{"residual", 4};
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        sw::check_param(batch >= 1 && channels >= 1 && height >= 1 && width >= 1,
                        "scaled_residual: batch, channels, height and width must be >= 1");
        result(x, y, c, n) = input(x, y, c, n) + scale(c) * residual(x, y, c, n);
        output(x, y, c, n) = result(x, y, c, n);

        const std::vector<std::string> names = {"width", "height", "channels", "batch"};
        sw::set_dense_shape(input, {width, height, channels, batch}, names);
        sw::set_dense_shape(residual, {width, height, channels, batch}, names);
        sw::set_dense_shape(scale, {channels}, {"channels"});
        sw::set_dense_shape(output, {width, height, channels, batch}, names);
    }

    void schedule() {
        if (get_auto_schedule())
            return; // AUTOSCHEDULER Sunway schedules the pipeline instead
        // Hand schedule: tiles of `rows` whole rows of one channel of one image, spread over the
        // 64 CPEs (gpu_blocks with DeviceAPI::Host marks the CPE loop). Each CPE brings its
        // tile of both inputs and its scale value into its LDM by DMA, computes the result in
        // LDM (4-wide SIMD when the rows are whole vectors) and writes it back by DMA.
        // LDM: 3 buffers of rows x width floats; 12 KB each at most.
        const int rows = std::max(1, std::min<int>(height, 3072 / width));
        Var yo("yo"), yi("yi"), tile("tile");
        output.split(y, yo, yi, rows, TailStrategy::ShiftInwards)
            .reorder(x, yi, yo, c, n)
            .fuse(yo, c, tile)
            .gpu_blocks(tile, n, DeviceAPI::Host);
        result.compute_at(output, tile).store_in(sw::LDM);
        if (width % 4 == 0)
            result.vectorize(x, 4);
        input.in().compute_at(output, tile).store_in(sw::LDM);
        residual.in().compute_at(output, tile).store_in(sw::LDM);
        scale.in().compute_at(output, tile).store_in(sw::LDM);
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    Func result{"result"};
};

} // namespace

HALIDE_REGISTER_GENERATOR(ScaledResidual, scaled_residual)
