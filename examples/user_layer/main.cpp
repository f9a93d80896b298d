/** \file
 * Runs the user's layer (scaled_residual_generator.cpp), built twice by add_sw_library
 * (hand schedule and AUTOSCHEDULER Sunway), on the emulated SW26010 core group and checks
 * both against naive C++ loops. Exit status 1 on any mismatch.
 */
#include "HalideBuffer.h"
#include "scaled_residual_auto.h"
#include "scaled_residual_hand.h"

#include <athread_emu.h>

#include <cmath>
#include <cstdio>
#include <random>

namespace {

using Buf = Halide::Runtime::Buffer<float>;
using LayerFn = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);

/** Runs \p fn and compares every output with the naive loops; the number of mismatches. */
long check(const char *name, LayerFn fn, Buf &in, Buf &scale, Buf &res) {
    Buf out(WIDTH, HEIGHT, CHANNELS, BATCH);
    out.fill(NAN);
    athread_emu_stats_reset();
    if (fn(in.raw_buffer(), scale.raw_buffer(), res.raw_buffer(), out.raw_buffer()) != 0) {
        std::fprintf(stderr, "%s: the layer returned an error\n", name);
        return 1;
    }
    double modelled = 0;
    for (int k = 0; k < athread_emu_stats_count(); k++)
        modelled += athread_emu_stats_get(k)->modelled_seconds;
    long bad = 0;
    for (int n = 0; n < BATCH; n++)
        for (int c = 0; c < CHANNELS; c++)
            for (int y = 0; y < HEIGHT; y++)
                for (int x = 0; x < WIDTH; x++) {
                    const float want = in(x, y, c, n) + scale(c) * res(x, y, c, n);
                    if (!(std::fabs(out(x, y, c, n) - want) <= 1e-5f * (1 + std::fabs(want)))) {
                        if (bad++ < 5) {
                            std::fprintf(stderr, "%s: out(%d, %d, %d, %d) = %g, expected %g\n",
                                         name, x, y, c, n, out(x, y, c, n), want);
                        }
                    }
                }
    std::printf("%s: %d CPE kernel(s), modelled %.1f us, %ld of %d outputs differ\n", name,
                athread_emu_stats_count(), modelled * 1e6, bad, BATCH * CHANNELS * HEIGHT * WIDTH);
    return bad + (athread_emu_stats_count() == 0 ? 1 : 0); // no kernel: it did not run on the CPEs
}

} // namespace

int main() {
    Buf in(WIDTH, HEIGHT, CHANNELS, BATCH), scale(CHANNELS), res(WIDTH, HEIGHT, CHANNELS, BATCH);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (Buf *b : {&in, &scale, &res})
        b->for_each_value([&](float &v) { v = dist(rng); });
    const long bad = check("hand", scaled_residual_hand, in, scale, res) +
                     check("autoscheduled", scaled_residual_auto, in, scale, res);
    return bad == 0 ? 0 : 1;
}
