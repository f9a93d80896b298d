/** \file
 * A test-only generator for sw::broadcast on a zero-padded staging (tests/broadcast_test.cpp):
 * a 3x3 convolution of one W x H image into `channels` output planes, one block per output
 * channel, the zero-padded image staged in LDM at the block level. Its staged box (the
 * (W + 2) x (H + 2) window) is the same for every block, so it can be broadcast; InjectDma
 * brings its in-bounds box by DMA and writes the padding (and, for this narrow image, spreads
 * the compact box into its padded place) after the wait, which every CPE must still do after
 * the sharing. Parameter sharing: none, dma (Sharing::Dma) or regcomm (Sharing::RegComm).
 *   out(x, y, c) = sum_{i, j < 3} padded(x + i - 1, y + j - 1) * w(i, j, c)
 */
#include "Halide.h"
#include "target_sw/BroadcastDma.h"
#include "target_sw/GeneratorSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

namespace {

using namespace Halide;

class PaddedShare : public Generator<PaddedShare> {
public:
    GeneratorParam<int> width{"width", 13};
    GeneratorParam<int> height{"height", 7};
    GeneratorParam<int> channels{"channels", 70};
    GeneratorParam<std::string> sharing{"sharing", "none"};
    GeneratorParam<std::string> machine{"machine", "sw26010"};
    Input<Buffer<float>> input{"input", 2};     // x, y
    Input<Buffer<float>> weights{"weights", 3}; // i, j, c
    Output<Buffer<float>> output{"output", 3};  // x, y, c

    void generate() {
        const int w = width, h = height;
        Var x("x"), y("y"), c("c");
        Func padded("padded"), conv("conv");
        padded(x, y) = select(x >= 0 && x < w && y >= 0 && y < h,
                              input(clamp(x, 0, w - 1), clamp(y, 0, h - 1)), 0.f);
        RDom r(0, 3, 0, 3, "r");
        conv(x, y, c) = 0.f;
        conv(x, y, c) += padded(x + r.x - 1, y + r.y - 1) * weights(r.x, r.y, c);
        output(x, y, c) = conv(x, y, c);
        sw::set_dense_shape(input, {w, h});
        sw::set_dense_shape(weights, {3, 3, channels});
        sw::set_dense_shape(output, {w, h, channels});

        output.gpu_blocks(c, DeviceAPI::Host);
        conv.compute_at(output, c).store_in(sw::LDM);
        padded.compute_at(output, c).store_in(sw::LDM);
        weights.in().compute_at(output, c).store_in(sw::LDM);
        const std::string how = sharing;
        sw::check_param(how == "none" || how == "dma" || how == "regcomm",
                        "sharing must be none, dma or regcomm");
        if (how != "none")
            sw::broadcast(padded, how == "dma" ? sw::Sharing::Dma : sw::Sharing::RegComm);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(PaddedShare, padded_share)
