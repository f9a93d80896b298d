/** \file
 * The timing model against the measured DMA curve, through our own frontend: STREAM copy
 * and triad written as a Halide generator (tests/stream_generator.cpp), lowered by the
 * Sunway target and run on the emulator, at each request size of
 * shared/sunway/dma_bandwidth.csv from 128 B up, must be modelled within 10%, except the points
 * the DMA fit itself leaves outside 10% with reads capped at the measured 28.5 GB/s
 * (Machine.h, tools/fit_dma_model.py: copy at 128 B and 8 KB, triad at 256 B; the copy
 * plateau sits at +9.5..+10.2% in the fit): within 12% there. The generated copy is a little
 * faster than the fit's hand-written kernel (no spawn/join here, a put's wait delayed).
 */
#include "HalideBuffer.h"
#include "jit/jit_layer.h"
#include "target_sw/Machine.h"

#include <athread_emu.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

/** Tolerance of a point: 10%, 12% where the fit is at its limit (see the file comment). */
double tolerance(const std::string &op, int64_t bytes) {
    if (op == "copy" && (bytes == 128 || bytes >= 8192))
        return 0.12;
    if (op == "triad" && bytes == 256)
        return 0.12;
    return 0.10;
}

using Buf = Halide::Runtime::Buffer<float>;

/** A float array whose first element sits 80 bytes after a 128-byte line boundary, the
 * layout of CAND's measurement (its arrays follow an 80-byte header). */
struct CandArray {
    std::vector<float> storage;
    float *data;
    explicit CandArray(size_t n) : storage(n + 64) {
        uintptr_t p = reinterpret_cast<uintptr_t>(storage.data());
        const uintptr_t start = (p + 127) / 128 * 128 + 80;
        data = reinterpret_cast<float *>(start);
    }
};

double modelled_gbps(const std::string &op, int chunk_bytes) {
    const int chunk = chunk_bytes / 4;
    const int per_cpe = std::max(8, (1 << 18) / chunk_bytes); // >= 256 KB per CPE
    const int size = 64 * chunk * per_cpe;
    sw_jit::JitBuild b = sw_jit::jit_build_layer(
        SW_TEST_GENERATOR, "stream",
        {{"op", op}, {"size", std::to_string(size)}, {"chunk", std::to_string(chunk)}});
    EXPECT_TRUE(b.ok()) << b.log;
    if (!b.ok())
        return 0;
    CandArray a(size), bb(size), c(size);
    for (int i = 0; i < size; i++)
        bb.data[i] = float(i), c.data[i] = 1.f;
    Buf ba(a.data, size), bbuf(bb.data, size), bc(c.data, size);
    athread_emu_stats_reset();
    EXPECT_EQ(b.layer->call({bbuf.raw_buffer(), bc.raw_buffer(), ba.raw_buffer()}), 0);
    EXPECT_EQ(a.data[size - 1], op == "copy" ? float(size - 1) : float(size - 1) + 3.f);
    const athread_emu_kernel_stats *s = athread_emu_stats_get(0);
    // Bandwidth inside the kernel (CAND times the CPE loop), STREAM accounting.
    const double seconds = double(s->cycles_max) / (sw::sw26010().clock_ghz * 1e9);
    const double bytes = double(size) * 4 * (op == "copy" ? 2 : 3);
    return bytes / seconds / 1e9;
}

TEST(ModelValidation, StreamThroughTheFrontendMatchesTheMeasuredCurve) {
    std::printf("%8s %8s %8s %7s %8s %8s %7s\n", "bytes", "copy", "model", "error", "triad",
                "model", "error");
    for (const sw::DmaPoint &p : sw::sw26010().dma_curve) {
        if (p.bytes_per_request < 128)
            continue;
        const double copy = modelled_gbps("copy", int(p.bytes_per_request));
        // Our triad keeps b, c and the result in LDM: three buffers of the request size,
        // which do not fit beyond 16 KB (CAND computes in place).
        if (3 * p.bytes_per_request > sw::sw26010().ldm_data_budget()) {
            std::printf("%8lld %8.2f %8.2f %+6.1f%%   (triad: 3 x %lld B do not fit the LDM)\n",
                        (long long)p.bytes_per_request, p.copy_gbps, copy,
                        100 * (copy / p.copy_gbps - 1), (long long)p.bytes_per_request);
            EXPECT_NEAR(copy / p.copy_gbps, 1.0, tolerance("copy", p.bytes_per_request))
                << "copy at " << p.bytes_per_request << " B";
            continue;
        }
        const double triad = modelled_gbps("triad", int(p.bytes_per_request));
        std::printf("%8lld %8.2f %8.2f %+6.1f%% %8.2f %8.2f %+6.1f%%\n",
                    (long long)p.bytes_per_request, p.copy_gbps, copy,
                    100 * (copy / p.copy_gbps - 1), p.triad_gbps, triad,
                    100 * (triad / p.triad_gbps - 1));
        EXPECT_NEAR(copy / p.copy_gbps, 1.0, tolerance("copy", p.bytes_per_request))
            << "copy at " << p.bytes_per_request << " B";
        EXPECT_NEAR(triad / p.triad_gbps, 1.0, tolerance("triad", p.bytes_per_request))
            << "triad at " << p.bytes_per_request << " B";
    }
}

} // namespace
