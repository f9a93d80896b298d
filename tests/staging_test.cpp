/** \file
 * The three staging variants of staging_generator.cpp on the emulator: all compute
 * out = in * 2 + 1 exactly; strided staging moves rows, the transposed one moves single
 * elements, the direct one issues no DMA but the argument struct's.
 */
#include "HalideBuffer.h"
#include "staging_direct.h"
#include "staging_strided.h"
#include "staging_transposed.h"

#include <athread_emu.h>
#include <gtest/gtest.h>

namespace {

using Buf = Halide::Runtime::Buffer<float>;
using Fn = int (*)(halide_buffer_t *, halide_buffer_t *);

struct Totals {
    long long gets = 0, puts = 0, get_blocks = 0, get_bytes = 0;
};

Totals run(Fn fn) {
    Buf in(37, 11, 3), out(37, 11, 3);
    in.for_each_element([&](int x, int y, int c) { in(x, y, c) = float(x + 100 * y + 10000 * c); });
    out.fill(-1.f);
    athread_emu_stats_reset();
    EXPECT_EQ(fn(in.raw_buffer(), out.raw_buffer()), 0);
    out.for_each_element([&](int x, int y, int c) {
        EXPECT_EQ(out(x, y, c), in(x, y, c) * 2.f + 1.f) << "at " << x << ", " << y << ", " << c;
    });
    Totals t;
    const athread_emu_kernel_stats *s = athread_emu_stats_get(0);
    for (int i = 0; i < s->ncpes; i++) {
        t.gets += s->cpe[i].get_requests;
        t.puts += s->cpe[i].put_requests;
        t.get_blocks += s->cpe[i].get_blocks;
        t.get_bytes += s->cpe[i].get_bytes;
    }
    return t;
}

// 37 x 11 in tiles of 8 x 4: 5 x 3 = 15 tiles, shifted inwards at the edges.
constexpr int tiles = 15;

TEST(Staging, StridedStagingMovesOneRequestPerChannel) {
    const Totals t = run(staging_strided);
    EXPECT_EQ(t.gets, 64 + tiles * 3); // argument structs + 3 channels per tile
    EXPECT_EQ(t.puts, tiles * 3);
    // Each CPE's argument struct holds two pointers; each tile brings 3 x 4 x 8 floats.
    EXPECT_EQ(t.get_bytes, 64 * 2 * (long long)sizeof(float *) + tiles * 3 * 4 * 8 * 4);
    EXPECT_EQ(t.get_blocks, 64 + tiles * 3 * 4); // 4 rows of 8 floats per channel
}

TEST(Staging, TransposedStagingFallsBackToOneRequestPerElement) {
    const Totals t = run(staging_transposed);
    EXPECT_EQ(t.gets, 64 + tiles * 3 * 4 * 8);
    EXPECT_EQ(t.puts, tiles * 3);
}

TEST(Staging, UnstagedCodeIssuesNoDma) {
    const Totals t = run(staging_direct);
    EXPECT_EQ(t.gets, 64); // only the argument structs
    EXPECT_EQ(t.puts, 0);
}

} // namespace
