/** \file
 * A STREAM-like generator written through our frontend, to validate the timing model
 * against the measured DMA curve: each CPE block stages `chunk` floats of each input in LDM
 * by DMA and writes `chunk` floats back, blocking, like CAND's measurement.
 *   op=copy:  a(i) = b(i)                 one get + one put of chunk*4 bytes per block
 *   op=triad: a(i) = b(i) + 3 * c(i)      two gets + one put; the arithmetic on floatv4
 */
#include "Halide.h"
#include "target_sw/GeneratorSupport.h"
#include "target_sw/PlaceLdmBuffers.h"

namespace {

using namespace Halide;

class Stream : public Generator<Stream> {
public:
    GeneratorParam<int> size{"size", 1 << 20};
    GeneratorParam<int> chunk{"chunk", 1024};
    GeneratorParam<std::string> op{"op", "copy"};
    GeneratorParam<std::string> machine{"machine", "sw26010"};
    Input<Buffer<float>> b{"b", 1};
    Input<Buffer<float>> c{"c", 1};
    Output<Buffer<float>> a{"a", 1};

    void generate() {
        const std::string kind = op;
        sw::check_param(kind == "copy" || kind == "triad", "stream: op must be copy or triad");
        sw::check_param(int(size) % int(chunk) == 0, "stream: chunk must divide size");
        Var i("i"), io("io"), ii("ii");
        Func result("result");
        result(i) = kind == "copy" ? b(i) : b(i) + 3.f * c(i);
        a(i) = result(i);
        for (auto *buf : {&b, &c})
            sw::set_dense_shape(*buf, {size});
        sw::set_dense_shape(a, {size});
        a.split(i, io, ii, chunk).gpu_blocks(io, DeviceAPI::Host);
        b.in().compute_at(a, io).store_in(sw::LDM);
        if (kind == "triad") {
            c.in().compute_at(a, io).store_in(sw::LDM);
            result.compute_at(a, io).store_in(sw::LDM).vectorize(i, 4);
        } else {
            result.compute_inline();
        }
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Stream, stream)
