/** \file
 * conv2d on the emulated SW26010 core group against a naive C++ loop nest and against
 * Halide's own CPU build of the same generator, for shapes the tiles do not divide, odd
 * channel counts and batch > 1; the emitted CPE source is strict C99 with no Halide
 * symbol; bad buffers, schedules that overflow the LDM and bad autoscheduling options of
 * the driver are clear errors.
 */
#include "HalideBuffer.h"
#include "reference/naive_layers.h"

#include <athread_emu.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#define CONV_CASE(name, ...)                                                                       \
    extern "C" int conv_##name##_sw(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,       \
                                    halide_buffer_t *);                                            \
    extern "C" int conv_##name##_cpu(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,      \
                                     halide_buffer_t *);
#include "conv_cases.inc"
#undef CONV_CASE

namespace {

using Buf = Halide::Runtime::Buffer<float>;
using ConvFn = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);

struct ConvCase {
    const char *name;
    int batch, in_c, out_c, h, w, k, stride, pad;
    bool relu;
    ConvFn sunway, cpu;
    int out_h() const { return (h + 2 * pad - k) / stride + 1; }
    int out_w() const { return (w + 2 * pad - k) / stride + 1; }
};

const ConvCase cases[] = {
#define CONV_CASE(name, n, ci, co, h, w, k, s, p, r)                                               \
    {#name, n, ci, co, h, w, k, s, p, r != 0, conv_##name##_sw, conv_##name##_cpu},
#include "conv_cases.inc"
#undef CONV_CASE
};

Buf random_buffer(std::vector<int> shape, std::mt19937 &rng) {
    Buf b(shape);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    b.for_each_value([&](float &v) { v = dist(rng); });
    return b;
}

/** The naive loop nest of reference/naive_layers.h, on copies of the buffers. */
Buf reference(const ConvCase &c, const Buf &in, const Buf &wt, const Buf &bias) {
    const auto p = reference::Conv2DParams::square(c.batch, c.in_c, c.out_c, c.h, c.w, c.k,
                                                   c.stride, c.pad, c.relu);
    auto vec = [](const Buf &b) {
        return std::vector<float>(b.data(), b.data() + b.number_of_elements());
    };
    const std::vector<float> out = reference::conv2d(p, vec(in), vec(wt), vec(bias));
    Buf result(c.out_w(), c.out_h(), c.out_c, c.batch);
    std::copy(out.begin(), out.end(), result.data());
    return result;
}

/** Largest |a - b| relative to the scale of the result; prints the first mismatch. */
void expect_close(const Buf &expected, const Buf &actual, const std::string &what) {
    float scale = 1.f;
    expected.for_each_value([&](float v) { scale = std::max(scale, std::fabs(v)); });
    int bad = 0;
    expected.for_each_element([&](const int *pos) {
        const float e = expected(pos), a = actual(pos);
        if (!(std::fabs(e - a) <= 1e-4f * scale) && bad++ == 0) {
            ADD_FAILURE() << what << ": first mismatch at (" << pos[0] << ", " << pos[1] << ", "
                          << pos[2] << ", " << pos[3] << "): expected " << e << ", got " << a;
        }
    });
    EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << expected.number_of_elements()
                      << " elements differ";
}

class Conv2D : public testing::TestWithParam<ConvCase> {};

TEST_P(Conv2D, EmulatedSunwayMatchesNaiveReferenceAndHalideCpu) {
    const ConvCase &c = GetParam();
    std::mt19937 rng(1234);
    Buf in = random_buffer({c.w, c.h, c.in_c, c.batch}, rng);
    Buf wt = random_buffer({c.k, c.k, c.in_c, c.out_c}, rng);
    Buf bias = random_buffer({c.out_c}, rng);
    Buf sw_out(c.out_w(), c.out_h(), c.out_c, c.batch),
        cpu_out(c.out_w(), c.out_h(), c.out_c, c.batch);
    sw_out.fill(NAN);

    athread_emu_stats_reset();
    ASSERT_EQ(c.sunway(in.raw_buffer(), wt.raw_buffer(), bias.raw_buffer(), sw_out.raw_buffer()),
              0);
    ASSERT_EQ(c.cpu(in.raw_buffer(), wt.raw_buffer(), bias.raw_buffer(), cpu_out.raw_buffer()), 0);
    const Buf ref = reference(c, in, wt, bias);
    expect_close(ref, sw_out, "Sunway vs naive");
    expect_close(cpu_out, sw_out, "Sunway vs Halide CPU");

    // The kernel staged its data by DMA and wrote every output element back by DMA.
    ASSERT_EQ(athread_emu_stats_count(), 1);
    const athread_emu_kernel_stats *s = athread_emu_stats_get(0);
    long long gets = 0, puts = 0, put_bytes = 0, ldm_peak = 0;
    for (int i = 0; i < s->ncpes; i++) {
        gets += s->cpe[i].get_requests;
        puts += s->cpe[i].put_requests;
        put_bytes += s->cpe[i].put_bytes;
        ldm_peak = std::max(ldm_peak, s->cpe[i].ldm_peak_bytes);
    }
    EXPECT_GT(gets, 0);
    EXPECT_GT(puts, 0);
    EXPECT_GE(put_bytes, (long long)sw_out.size_in_bytes());
    EXPECT_GT(ldm_peak, 0);
    EXPECT_LE(ldm_peak, s->ldm_budget_bytes);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2D, testing::ValuesIn(cases),
                         [](const testing::TestParamInfo<ConvCase> &i) {
                             return std::string(i.param.name);
                         });

TEST(Conv2DErrors, WrongBufferShapeIsAClearErrorNotACrash) {
    const ConvCase &c = cases[0];
    Buf in(c.w + 1, c.h, c.in_c, c.batch), wt(c.k, c.k, c.in_c, c.out_c), bias(c.out_c);
    Buf out(c.out_w(), c.out_h(), c.out_c, c.batch);
    testing::internal::CaptureStderr();
    const int rc = c.sunway(in.raw_buffer(), wt.raw_buffer(), bias.raw_buffer(), out.raw_buffer());
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(rc, 0);
    EXPECT_NE(err.find("input.extent.0 is " + std::to_string(c.w + 1)), std::string::npos) << err;
}

std::string run(const std::string &cmd, int *status) {
    std::string out;
    FILE *p = popen((cmd + " 2>&1").c_str(), "r");
    char buf[4096];
    while (p && fgets(buf, sizeof buf, p))
        out += buf;
    *status = p ? pclose(p) : -1;
    return out;
}

TEST(CpeSource, IsStrictC99WithOnlyTheAthreadApi) {
    std::ifstream f(CPE_SOURCE);
    std::stringstream text;
    text << f.rdbuf();
    ASSERT_FALSE(text.str().empty());
    EXPECT_EQ(text.str().find("halide_"), std::string::npos);
    EXPECT_NE(text.str().find("athread_get(PE_MODE"), std::string::npos);
    EXPECT_NE(text.str().find("athread_put(PE_MODE"), std::string::npos);
    EXPECT_NE(text.str().find("ldm_malloc("), std::string::npos);
    const std::string src = CPE_SOURCE;
    const std::string dir = src.substr(0, src.rfind('/'));
    // As sw5cc builds it (-std=gnu99) and as strict C99; more layers in generated_c_test.
    for (const char *std : {"-std=gnu99", "-std=c99 -pedantic-errors"}) {
        int status = 0;
        const std::string out =
            run(std::string("gcc ") + std + " -Wall -Wextra -Werror -fsyntax-only -I" +
                    std::string(EMULATOR_INCLUDE) + " -I" + dir + " " + src,
                &status);
        EXPECT_EQ(status, 0) << std << ": " << out;
    }
}

TEST(Conv2DSchedule, ChunkedInputChannelsAreDoubleBuffered) {
    // The "tiny_tiles" case (9 input channels staged 3 at a time) prefetches the next chunk's
    // window and weights into a second LDM slot; its results are checked above.
    std::ifstream f(TINY_TILES_REPORT);
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_NE(text.str().find("padded <- input: zero-padded window"), std::string::npos)
        << text.str();
    EXPECT_NE(text.str().find("(double buffered)"), std::string::npos) << text.str();
    EXPECT_EQ(text.str().find("not applied"), std::string::npos) << text.str();
}

TEST(GeneratorErrors, ScheduleThatOverflowsTheLdmNamesBuffersAndSizes) {
    int status = 0;
    const std::string out = run(
        std::string(GENERATOR) + " -g conv2d -f big -o /tmp target=sw26010 in_channels=64 "
                                 "out_channels=64 height=64 width=64 tile_x=32 tile_y=16 tile_c=32",
        &status);
    EXPECT_NE(status, 0);
    EXPECT_NE(out.find("does not fit the LDM"), std::string::npos) << out;
    EXPECT_NE(out.find("the limit is 57344 bytes"), std::string::npos) << out;
    EXPECT_NE(out.find("conv: 65536 bytes"), std::string::npos) << out;
    EXPECT_NE(out.find("padded: "), std::string::npos) << out; // the zero-padded input window
}

TEST(GeneratorErrors, TheLargerLdmOfSw26010ProFitsTheSameTiles) {
    int status = 0;
    const std::string out =
        run(std::string(GENERATOR) + " -g conv2d -f big -o /tmp -e report target=sw26010-pro "
                                     "in_channels=64 out_channels=64 height=64 width=64 tile_x=32 "
                                     "tile_y=16 tile_c=32",
            &status);
    EXPECT_EQ(status, 0) << out;
}

TEST(GeneratorErrors, BadParametersAreClearErrors) {
    int status = 0;
    std::string out =
        run(std::string(GENERATOR) + " -g conv2d -o /tmp target=sw26010 kernel=0", &status);
    EXPECT_NE(status, 0);
    EXPECT_NE(out.find("kernel and stride must be >= 1"), std::string::npos) << out;
    out = run(std::string(GENERATOR) +
                  " -g conv2d -o /tmp target=sw26010 kernel=9 height=3 width=3 pad=0",
              &status);
    EXPECT_NE(status, 0);
    EXPECT_NE(out.find("larger than the padded input"), std::string::npos) << out;
    out = run(std::string(GENERATOR) + " -g nosuch -o /tmp target=sw26010", &status);
    EXPECT_NE(status, 0);
    EXPECT_NE(out.find("unknown generator 'nosuch'"), std::string::npos) << out;
    out = run(std::string(GENERATOR) + " -g conv2d -o /tmp target=sw26010 tile_ci=5 in_channels=8",
              &status);
    EXPECT_NE(status, 0);
    EXPECT_NE(out.find("must divide in_channels per group"), std::string::npos) << out;
}

TEST(GeneratorErrors, ShapesBeyond32BitArithmeticAreBuildTimeErrors) {
    // 65536 x 65536 x 3 floats: 48 GiB, beyond Halide's int32 strides and 2^31 - 1 bytes.
    // The generated function would fail on every call: the generator must refuse it.
    int status = 0;
    std::string out = run(std::string(GENERATOR) +
                              " -g conv2d -f huge -o /tmp target=sw26010 height=65536 width=65536",
                          &status);
    EXPECT_NE(status, 0) << out;
    EXPECT_NE(
        out.find(
            "error: the buffer 'input' (65536 x 65536 x 3 x 1: 12884901888 elements, 51539607552 "
            "bytes) overflows 32-bit arithmetic"),
        std::string::npos)
        << out;
    EXPECT_NE(out.find("from the parameters width, height, in_channels, batch"), std::string::npos)
        << out;
    // dense: the weights of in_features x out_features.
    out = run(std::string(GENERATOR) +
                  " -g dense -f huge -o /tmp target=sw26010 in_features=100000 out_features=100000",
              &status);
    EXPECT_NE(status, 0) << out;
    EXPECT_NE(out.find("error: the buffer 'weights' (100000 x 100000: 10000000000 elements"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("from the parameters in_features, out_features"), std::string::npos) << out;
    // Just below the limit in elements but not in bytes: 2^29 + 1 floats.
    out = run(std::string(GENERATOR) + " -g relu -f huge -o /tmp target=sw26010 size=536870913",
              &status);
    EXPECT_NE(status, 0) << out;
    EXPECT_NE(
        out.find("error: the buffer 'input' (536870913: 536870913 elements, 2147483652 bytes)"),
        std::string::npos)
        << out;
}

TEST(GeneratorErrors, BadAutoscheduleOptionsAreClearErrors) {
    int status = 0;
    std::string out = run(std::string(GENERATOR) +
                              " -g conv2d -o /tmp -s Nosuch auto_schedule=true target=sw26010",
                          &status);
    EXPECT_NE(status, 0);
    EXPECT_NE(out.find("unknown autoscheduler 'Nosuch'"), std::string::npos) << out;
    EXPECT_NE(out.find("registered: none"), std::string::npos) << out; // no plugin loaded (-p)
    out = run(std::string(GENERATOR) + " -g conv2d -o /tmp auto_schedule=true target=sw26010",
              &status);
    EXPECT_NE(status, 0);
    EXPECT_NE(out.find("auto_schedule=true needs -s AUTOSCHEDULER"), std::string::npos) << out;
    out = run(std::string(GENERATOR) + " -g conv2d -o /tmp -e h,schedule target=sw26010", &status);
    EXPECT_NE(status, 0);
    EXPECT_NE(out.find("-e schedule writes the autoscheduler's schedule"), std::string::npos)
        << out;
}

} // namespace
