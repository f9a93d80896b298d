/** \file
 * sw::stage_output through the autoscheduler: the element-wise add eltwise_add
 * (tests/staging_generator.cpp), whose output computes its values itself, is scheduled by
 * the Sunway autoscheduler (libsw_autoschedule.so) for a few shapes (tiles that divide the
 * shape, clamped edge tiles, odd channels), run on the emulator against a naive reference,
 * and must write its output by DMA puts with no direct main-memory access, in the time the
 * autoscheduler predicted (within 15% of the emulator's timing model). Each shape is also
 * built as before the directive (SW_AUTOSCHEDULE_STAGE_OUTPUT=0: elements stored directly)
 * and both sets of figures are printed.
 */
#include "HalideBuffer.h"
#include "jit/jit_layer.h"

#include <athread_emu.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

using Buf = Halide::Runtime::Buffer<float>;

struct Shape {
    int width, height, channels;
};

struct Figures {
    double predicted_ms = -1, emulated_ms = 0;
    long long direct = 0, puts = 0, put_bytes = 0;
    int busy_cpes = 0;
    std::string schedule;
};

/** The "// predicted X ms" line of FUNCTION.schedule.h, and the whole file. */
double predicted_ms(const sw_jit::JitLayer &layer, std::string *text) {
    std::ifstream f(layer.dir() + "/" + layer.function_name() + ".schedule.h");
    double ms = -1;
    for (std::string line; std::getline(f, line);) {
        *text += line + "\n";
        const size_t at = line.find("// predicted ");
        if (at != std::string::npos && ms < 0)
            ms = std::atof(line.c_str() + at + 13);
    }
    return ms;
}

Figures build_and_run(const Shape &s, bool staged) {
    sw_jit::JitOptions o;
    o.extra_args = {"-p", SW_AUTOSCHEDULE_PLUGIN, "-s", "Sunway", "auto_schedule=true"};
    o.emit = "mpe,cpe,h,schedule";
    if (!staged)
        o.env["SW_AUTOSCHEDULE_STAGE_OUTPUT"] = "0";
    sw_jit::JitBuild b = sw_jit::jit_build_layer(SW_TEST_GENERATOR, "eltwise_add",
                                                 {{"width", std::to_string(s.width)},
                                                  {"height", std::to_string(s.height)},
                                                  {"channels", std::to_string(s.channels)}},
                                                 o);
    Figures r;
    EXPECT_TRUE(b.ok()) << b.log;
    if (!b.ok())
        return r;
    r.predicted_ms = predicted_ms(*b.layer, &r.schedule);
    Buf a(s.width, s.height, s.channels), bb(s.width, s.height, s.channels),
        out(s.width, s.height, s.channels);
    a.for_each_element([&](int x, int y, int c) { a(x, y, c) = float(x + 1000 * y) + 0.25f * c; });
    bb.for_each_element([&](int x, int y, int c) { bb(x, y, c) = float(7 * c - y) * 0.5f - x; });
    out.fill(-12345.f);
    athread_emu_stats_reset();
    EXPECT_EQ(b.layer->call({a.raw_buffer(), bb.raw_buffer(), out.raw_buffer()}), 0);
    int wrong = 0;
    out.for_each_element([&](int x, int y, int c) {
        const float want = a(x, y, c) + bb(x, y, c);
        if (out(x, y, c) != want && wrong++ < 5) {
            ADD_FAILURE() << "at (" << x << ", " << y << ", " << c << "): " << out(x, y, c)
                          << ", want " << want;
        }
    });
    EXPECT_EQ(wrong, 0);
    for (int k = 0; k < athread_emu_stats_count(); k++) {
        const athread_emu_kernel_stats *st = athread_emu_stats_get(k);
        r.emulated_ms += st->modelled_seconds * 1e3;
        for (int i = 0; i < st->ncpes; i++) {
            r.direct += st->cpe[i].direct_accesses;
            r.puts += st->cpe[i].put_requests;
            r.put_bytes += st->cpe[i].put_bytes;
            r.busy_cpes += st->cpe[i].put_requests > 0 || st->cpe[i].direct_accesses > 0;
        }
    }
    return r;
}

class StageOutput : public ::testing::TestWithParam<Shape> {};

TEST_P(StageOutput, EltwiseAddWritesItsOutputByDmaInThePredictedTime) {
    const Shape s = GetParam();
    const Figures before = build_and_run(s, false);
    const Figures after = build_and_run(s, true);
    std::printf(
        "eltwise_add %dx%dx%d: before: predicted %.4f ms, emulated %.4f ms, %lld direct accesses, "
        "%lld puts, %d CPEs busy\n",
        s.width, s.height, s.channels, before.predicted_ms, before.emulated_ms, before.direct,
        before.puts, before.busy_cpes);
    std::printf(
        "eltwise_add %dx%dx%d: after:  predicted %.4f ms, emulated %.4f ms, %lld direct accesses, "
        "%lld puts (%lld B), %d CPEs busy\n",
        s.width, s.height, s.channels, after.predicted_ms, after.emulated_ms, after.direct,
        after.puts, after.put_bytes, after.busy_cpes);
    EXPECT_NE(after.schedule.find("::sw::stage_output(output);"), std::string::npos)
        << after.schedule;
    EXPECT_EQ(before.schedule.find("stage_output"), std::string::npos) << before.schedule;
    EXPECT_EQ(after.direct, 0);
    EXPECT_GT(after.puts, 0);
    // Every element is put at least once (edge tiles shifted inwards overlap their neighbours).
    EXPECT_GE(after.put_bytes, 4LL * s.width * s.height * s.channels);
    ASSERT_GT(after.predicted_ms, 0);
    ASSERT_GT(after.emulated_ms, 0);
    EXPECT_LT(std::fabs(after.predicted_ms - after.emulated_ms) / after.emulated_ms, 0.15)
        << "predicted " << after.predicted_ms << " ms, emulated " << after.emulated_ms << " ms\n"
        << after.schedule;
    EXPECT_LT(after.emulated_ms, before.emulated_ms);
}

INSTANTIATE_TEST_SUITE_P(staging, StageOutput,
                         ::testing::Values(Shape{56, 56, 64},  // tiles divide the shape
                                           Shape{127, 131, 3}, // prime extents: clamped edge tiles
                                           Shape{28, 28, 33}), // odd channels
                         [](const ::testing::TestParamInfo<Shape> &i) {
                             return "w" + std::to_string(i.param.width) + "_h" +
                                    std::to_string(i.param.height) + "_c" +
                                    std::to_string(i.param.channels);
                         });

} // namespace
