/** \file
 * concat: ONNX Concat along the channels of NCHW float32 tensors (Halide dims x, y, c, n).
 * The inputs are an array of any length >= 2 (Halide's input array: its length is the
 * generator parameter `input.size`, the buffers are input_0, input_1, ...), and `channels`
 * lists the channels of each, comma-separated: input.size=3 channels=16,32,8 gives an
 * output of 56 channels. Any other axis reduces to this one (the dims before it as the
 * batch, those after it as the width).
 *
 * No arithmetic: the output has no pure values (undef) and one update per input,
 *   output(x, y, offset_k + r, n) = input_k(x, y, r, n),   r < channels_k,
 * so each input is copied by its own loop nest (on Sunway, its own kernel) into its slice.
 */
#include "generators/LayerGenerator.h"
#include "schedules/concat_schedule.h"

#include <sstream>

namespace {

using namespace Halide;

class Concat : public layers::LayerGenerator<Concat> {
public:
    GeneratorParam<int> batch{"batch", 1};
    GeneratorParam<int> height{"height", 8};
    GeneratorParam<int> width{"width", 8};
    GeneratorParam<std::string> channels{"channels", "4,4"}; ///< of each input, comma-separated

    Input<Buffer<float>[]> input { "input", 4 };
    Output<Buffer<float>> output{"output", 4};

    void generate() {
        const std::vector<int> cs = channel_list();
        sw::check_param(input.size() == cs.size(),
                        "concat: channels lists " + std::to_string(cs.size()) +
                            " inputs but input.size is " + std::to_string(input.size()));
        sw::check_param(cs.size() >= 2, "concat: needs at least 2 inputs");
        sw::check_param(batch >= 1 && height >= 1 && width >= 1,
                        "concat: batch, height and width must be >= 1");
        /* THE ALGORITHM */
        output(x, y, c, n) = undef<float>();
        int offset = 0;
        for (size_t k = 0; k < cs.size(); k++) {
            RDom r(0, cs[k], "r" + std::to_string(k));
            output(x, y, offset + r, n) = input[k](x, y, r, n);
            offset += cs[k];
            ImageParam in_k = input[k]; // a handle: the bounds apply to the input
            sw::set_dense_shape(in_k, {width, height, cs[k], batch},
                                {"width", "height", "channels", "batch"});
        }
        sw::set_dense_shape(output, {width, height, offset, batch},
                            {"width", "height", "channels", "batch"});
        shape_ = {batch, height, width, cs};
    }

    void schedule() {
        /* THE SCHEDULE */
        schedules::ConcatStages st{output, {}, x, y, n};
        for (size_t k = 0; k < input.size(); k++)
            st.inputs.push_back(input[k]);
        apply_schedule([&] { schedules::schedule_concat_sunway(st, shape_, target_machine()); },
                       [&] { schedules::schedule_concat_baseline(st, shape_); },
                       [&] { schedules::schedule_concat_cpu(st); });
    }

private:
    Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
    schedules::ConcatShape shape_{};

    std::vector<int> channel_list() const {
        std::vector<int> cs;
        std::stringstream in{std::string(channels)};
        std::string item;
        while (std::getline(in, item, ',')) {
            char *end = nullptr;
            const long v = std::strtol(item.c_str(), &end, 10);
            sw::check_param(
                !item.empty() && *end == 0 && v >= 1 && v <= (1 << 24),
                "concat: channels must be a comma-separated list of counts >= 1, not '" +
                    std::string(channels) + "'");
            cs.push_back(int(v));
        }
        return cs;
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Concat, concat)
