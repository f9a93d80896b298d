/** \file
 * The generator parameters (name=value) of a conv2d or pool layer described by the naive
 * reference's parameter structs, for the tests that build layers at run time.
 */
#ifndef SW_TESTS_SUPPORT_LAYER_PARAMS_H
#define SW_TESTS_SUPPORT_LAYER_PARAMS_H

#include "reference/naive_layers.h"

#include <map>
#include <string>

namespace sw_test {

inline std::map<std::string, std::string> conv2d_params(const reference::Conv2DParams &p) {
    auto s = [](int v) { return std::to_string(v); };
    return {{"batch", s(p.batch)},
            {"in_channels", s(p.in_c)},
            {"out_channels", s(p.out_c)},
            {"height", s(p.h)},
            {"width", s(p.w)},
            {"kernel", s(p.kernel_x)},
            {"kernel_y", s(p.kernel_y)},
            {"stride", s(p.stride_x)},
            {"stride_y", s(p.stride_y)},
            {"pad_left", s(p.pad_left)},
            {"pad_right", s(p.pad_right)},
            {"pad_top", s(p.pad_top)},
            {"pad_bottom", s(p.pad_bottom)},
            {"groups", s(p.groups)},
            {"relu", p.relu ? "true" : "false"}};
}

inline std::map<std::string, std::string> pool_params(const reference::PoolParams &p) {
    auto s = [](int v) { return std::to_string(v); };
    return {{"batch", s(p.batch)},
            {"channels", s(p.channels)},
            {"height", s(p.h)},
            {"width", s(p.w)},
            {"kernel", s(p.kernel_x)},
            {"kernel_y", s(p.kernel_y)},
            {"stride", s(p.stride_x)},
            {"stride_y", s(p.stride_y)},
            {"pad_left", s(p.pad_left)},
            {"pad_right", s(p.pad_right)},
            {"pad_top", s(p.pad_top)},
            {"pad_bottom", s(p.pad_bottom)},
            {"ceil_mode", p.ceil_mode ? "true" : "false"},
            {"type", p.is_max ? "max" : "avg"},
            {"count_include_pad", p.count_include_pad ? "true" : "false"}};
}

} // namespace sw_test

#endif
