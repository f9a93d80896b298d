/** \file
 * Tests of the emulator's SW26010 timing model (target_sw/emulator/src/timing.cpp): STREAM
 * copy/triad against CAND's measured curve (shared/sunway/dma_bandwidth.csv, the same
 * numbers as Machine.h's dma_curve), strided DMA against SW26010.md's ranges, reads only
 * (64 CPEs reading 4 KB blocks; swDNN's "Multiple DMA Read" test) against the measured
 * evidence, the get channel under its measured cap, the per-direction block costs, the
 * compute formula, the roofline bound on every kernel, overlap of asynchronous DMA with
 * compute, bandwidth shares with fewer CPEs, requests never waited, and the trace.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <athread.h>
#include <athread_emu.h>

#include "benchlib/timing_model_kernels.h"
#include "benchlib/timing_model_runs.h"
#include "target_sw/Machine.h"

extern "C" {
extern void SLAVE_FUN(compute_kernel)(void *);
extern void SLAVE_FUN(overlap_kernel)(void *);
}

namespace {

const int kCpes = 64;

using tm_runs::Mem;

class TimingModel : public ::testing::Test {
protected:
    void SetUp() override {
        athread_emu_set_machine("sw26010");
        athread_emu_stats_reset();
        athread_emu_set_trace(0);
        athread_emu_trace_reset();
        athread_init();
    }
    static const athread_emu_kernel_stats &last() {
        return *athread_emu_stats_get(athread_emu_stats_count() - 1);
    }
};

/** The roofline no kernel may beat: flops at the CG's peak, DMA line bytes through the
 *  model's channel alone, and DMA bytes at the theoretical DDR3 bandwidth. */
void check_roofline(const athread_emu_kernel_stats &r) {
    const sw::Machine &m = *sw::machine_by_name(r.machine);
    double flops = 0, bytes = 0, channel = 0;
    for (int i = 0; i < r.ncpes; i++) {
        const athread_emu_cpe_stats &c = r.cpe[i];
        flops += c.flops;
        bytes += c.get_bytes + c.put_bytes;
        channel += c.get_line_bytes / m.dma_timing.get_bytes_per_cycle +
                   c.put_line_bytes / m.dma_timing.put_bytes_per_cycle;
    }
    double hz = m.clock_ghz * 1e9;
    double t_flops = flops / (m.cpes_per_core_group * m.flops_per_cycle_per_cpe * hz);
    double t_bytes = bytes / (m.dma_theoretical_gbps * 1e9);
    double t_channel = channel / hz;
    double bound = std::max({t_flops, t_bytes, t_channel});
    EXPECT_GE(r.modelled_seconds * (1 + 1e-9), bound) << r.kernel;
    EXPECT_GE(r.cycles_max + 1, (long long)std::floor(std::max(t_flops, t_channel) * hz))
        << r.kernel;
}

/** Runs CAND's STREAM copy or triad at `bytes` per request with `active` CPEs; returns the
 *  STREAM bandwidth (copy 2, triad 3 arrays) from the modelled time. */
double run_stream(int bytes, bool triad, int active = kCpes, int iters = 0, bool account = true) {
    double first_a = 0;
    const tm_runs::Run r = tm_runs::stream(bytes, triad, active, iters, account, &first_a);
    check_roofline(*r.stats);
    if (triad) {
        EXPECT_EQ(first_a, 1.0 + 3.0 * 2.0);
    }
    return r.gbps;
}

TEST_F(TimingModel, StreamMatchesCandFrom128Bytes) {
    const sw::Machine &m = sw::sw26010();
    std::printf("  bytes  copy: meas  model   err | triad: meas  model   err\n");
    for (const sw::DmaPoint &p : m.dma_curve) {
        double copy = run_stream((int)p.bytes_per_request, false);
        double triad = run_stream((int)p.bytes_per_request, true);
        double ec = (copy - p.copy_gbps) / p.copy_gbps, et = (triad - p.triad_gbps) / p.triad_gbps;
        std::printf("  %5lld       %5.2f  %5.2f %+5.1f%% |        %5.2f  %5.2f %+5.1f%%%s\n",
                    (long long)p.bytes_per_request, p.copy_gbps, copy, 100 * ec, p.triad_gbps,
                    triad, 100 * et,
                    p.bytes_per_request < 128 ? "  (sub-line: reported only)" : "");
        if (p.bytes_per_request >= 128) {
            // Within 10%, except three points the fit cannot bring under 10% with gets capped
            // at get_cap_gbps (Machine.h, tools/fit_dma_model.py): CAND's time per request
            // falls from 128 B to 256 B, the model's cannot. They stay under 10.5%.
            const bool copy_over = p.bytes_per_request == 128 || p.bytes_per_request == 8192;
            const bool triad_over = p.bytes_per_request == 256;
            EXPECT_LT(std::fabs(ec), copy_over ? 0.105 : 0.10) << "copy " << p.bytes_per_request;
            EXPECT_LT(std::fabs(et), triad_over ? 0.105 : 0.10) << "triad " << p.bytes_per_request;
        } else {
            // Sub-line requests: the line-byte model is too slow there (known, see Machine.h);
            // keep it from getting worse than it is.
            EXPECT_LT(std::fabs(ec), 0.55) << "copy " << p.bytes_per_request;
            EXPECT_LT(std::fabs(et), 0.55) << "triad " << p.bytes_per_request;
        }
    }
}

TEST_F(TimingModel, StridedWithinCandRanges) {
    // SW26010.md: 24 KB per descriptor, copy GB/s by block size (hardly on the gap).
    std::printf("  block  gap   range GB/s   model\n");
    for (const auto &rg : tm_runs::cand_strided_ranges()) {
        for (int gap : {rg.bsize / 2, 3 * rg.bsize}) {
            const tm_runs::Run r = tm_runs::strided(rg.bsize, gap);
            check_roofline(*r.stats);
            const double gbps = r.gbps;
            std::printf("  %5d %5d  %5.1f-%5.1f  %6.2f\n", rg.bsize, gap, rg.lo, rg.hi, gbps);
            // Within 10% of the published range.
            EXPECT_GT(gbps, rg.lo * 0.90) << rg.bsize << " gap " << gap;
            EXPECT_LT(gbps, rg.hi * 1.10) << rg.bsize << " gap " << gap;
        }
    }
}

/** Runs dma_only_kernel (gets or puts only, each waited); returns GB/s of requested bytes
 *  over the modelled time (spawn and join included, as a host timer would see them). */
double run_dma_only(int bytes, int bsize, int gap, int iters, bool same_addr, bool put = false,
                    int active = kCpes) {
    const tm_runs::Run r = tm_runs::dma_only(bytes, bsize, gap, iters, same_addr, put, active);
    check_roofline(*r.stats);
    return r.gbps;
}

TEST_F(TimingModel, GetChannelUnderMeasuredCap) {
    // No get channel faster than the measurements support (Machine.h, get_cap_gbps), and
    // that cap below the DRAM's theoretical rate.
    for (const sw::Machine *m : {&sw::sw26010(), &sw::sw26010_pro()}) {
        const sw::DmaTiming &t = m->dma_timing;
        EXPECT_LE(t.get_bytes_per_cycle * m->clock_ghz, t.get_cap_gbps + 1e-9) << m->name;
        EXPECT_LE(t.get_cap_gbps, m->dma_theoretical_gbps) << m->name;
        EXPECT_LE(t.put_bytes_per_cycle * m->clock_ghz, m->dma_theoretical_gbps) << m->name;
    }
}

TEST_F(TimingModel, ReadsOnlyWithinMeasuredEvidence) {
    // 64 CPEs reading 4 KB blocks and nothing else (the calibration benchmark's
    // read_only_gbps): between swDNN's typical reads-only figures (21-24 GB/s) and the top of
    // CAND's decomposed get rate (28.5 GB/s), never at DDR3's 34.1 GB/s.
    const double gbps = run_dma_only(4096, 0, 0, 256, false);
    std::printf("  reads only, 64 CPEs x 256 x 4 KB: %.2f GB/s\n", gbps);
    EXPECT_GE(gbps, 20.0);
    EXPECT_LE(gbps, 28.5);
    EXPECT_LE(gbps, sw::sw26010().dma_timing.get_cap_gbps);
}

TEST_F(TimingModel, SwdnnMultipleDmaRead) {
    // swDNN (feifeibear/swDNN swCNNv12-4cg-opt-batch-size-aware test.c DMA_banchmark, dma_read
    // of swCNNv13): per spawn, each of the 64 CPEs does 20 blocking gets of B/8 x Ni/8 doubles
    // in blocks of B/8 doubles, 8 blocks apart, all CPEs the same addresses; the figure
    // includes the spawn and the join. Measured (run.log), per shape: B=128 Ni=128 20.9-22.1
    // GB/s (and one first run at 16.8), B=128 Ni=320 21.3-24.3, B=256 Ni=128 26.0 (one run).
    struct {
        int B, Ni;
        double lo, hi, tol;
    } shapes[] = {
        {128, 128, 20.9, 22.1, 0.10},
        {128, 320, 21.3, 24.3, 0.10},
        // The fit leaves it at -10.2% (gets capped at 28.5 GB/s, spawn + join [U] 12 us).
        {256, 128, 26.0, 26.0, 0.105},
    };
    std::printf("  shape           get   block  measured GB/s  model\n");
    for (auto &s : shapes) {
        const int bsize = s.B / 8 * 8, bytes = s.B / 8 * s.Ni / 8 * 8;
        const double gbps = run_dma_only(bytes, bsize, 7 * bsize, 20, true);
        std::printf("  B=%3d Ni=%3d %6d %6d  %5.1f-%5.1f  %6.2f\n", s.B, s.Ni, bytes, bsize, s.lo,
                    s.hi, gbps);
        EXPECT_GT(gbps, s.lo * (1 - s.tol)) << s.B << " " << s.Ni;
        EXPECT_LT(gbps, s.hi * (1 + s.tol)) << s.B << " " << s.Ni;
        // Inside the range of all swDNN's runs.
        EXPECT_GE(gbps, 16.8);
        EXPECT_LE(gbps, 26.0);
    }
}

TEST_F(TimingModel, BlockCostsPerDirection) {
    // One CPE alone: a strided get or put of 16 aligned 128-byte blocks takes its direction's
    // per-block cost 16 times, its 2 KB of lines at the per-CPE cap, then its latency.
    const sw::DmaTiming &t = sw::sw26010().dma_timing;
    for (bool put : {false, true}) {
        run_dma_only(2048, 128, 896, 1, false, put, 1);
        const double block = put ? t.put_block_cycles : t.get_block_cycles;
        const double rate = std::min(t.cpe_cap_bytes_per_cycle,
                                     put ? t.put_bytes_per_cycle : t.get_bytes_per_cycle);
        const double lat = put ? t.put_latency_cycles : t.get_latency_cycles;
        EXPECT_NEAR(last().cycles_max, 16 * block + 2048 / rate + lat, 2) << (put ? "put" : "get");
    }
    EXPECT_LT(t.get_block_cycles, t.put_block_cycles);
}

TEST_F(TimingModel, ComputeFormula) {
    const sw::Machine &m = sw::sw26010();
    struct {
        long long p0, p1, either, slow, flops;
    } cases[] = {
        {100, 10, 0, 0, 800},  // P0 bound
        {10, 100, 0, 0, 80},   // P1 bound
        {40, 40, 100, 0, 320}, // dual issue bound: ceil(180 / 2) = 90
        {40, 40, 101, 7, 320}, // ceil(181 / 2) = 91, + 7 slow
        {100, 0, 0, 0, 800},   // P0 only: nothing to pair
        {0, 100, 0, 3, 0},     // P1 only, + 3 slow
    };
    for (auto &c : cases) {
        tm_compute_args args{c.p0, c.p1, c.either, c.slow, c.flops, 1000, 0};
        athread_spawn(compute_kernel, &args);
        athread_join();
        const athread_emu_kernel_stats &r = last();
        long long per = std::max({c.p0, c.p1, (c.p0 + c.p1 + c.either + 1) / 2}) + c.slow;
        EXPECT_EQ(r.cycles_max, per * 1000);
        // No pairing: one instruction a cycle.
        const long long unpaired = c.p0 + c.p1 + c.either + c.slow;
        for (int i = 0; i < kCpes; i++) {
            EXPECT_EQ(r.cpe[i].cycles, per * 1000);
            EXPECT_EQ(r.cpe[i].compute_cycles, per * 1000);
            EXPECT_EQ(r.cpe[i].dma_wait_cycles, 0);
            EXPECT_EQ(r.cpe[i].flops, c.flops * 1000);
            EXPECT_EQ(r.cpe[i].unpaired_extra_cycles, (unpaired - per) * 1000);
        }
        double expect = (m.dma_timing.spawn_cycles + per * 1000 + m.dma_timing.join_cycles) /
                        (m.clock_ghz * 1e9);
        EXPECT_NEAR(r.modelled_seconds, expect, 1e-12);
        EXPECT_EQ(r.cycles_max_unpaired, unpaired * 1000);
        EXPECT_NEAR(r.modelled_unpaired_seconds,
                    (m.dma_timing.spawn_cycles + unpaired * 1000 + m.dma_timing.join_cycles) /
                        (m.clock_ghz * 1e9),
                    1e-12);
        EXPECT_GE(r.modelled_unpaired_seconds, r.modelled_seconds);
        if ((c.p0 == 0 || c.p1 == 0) && c.either == 0)
            EXPECT_EQ(r.modelled_unpaired_seconds, r.modelled_seconds); // bit for bit
        else
            EXPECT_GT(r.modelled_unpaired_seconds, r.modelled_seconds);
        check_roofline(r);
    }
    // A peak-rate kernel (one floatv4 FMA per cycle: 8 flops) reaches the roofline exactly.
    tm_compute_args peak{1, 0, 0, 0, 8, 100000, 0};
    athread_spawn(compute_kernel, &peak);
    athread_join();
    check_roofline(last());
    EXPECT_EQ(last().cycles_max, 100000);
}

TEST_F(TimingModel, UnpairedTimeAddsEachCpesExtraCyclesToItsEnd) {
    // The generated code's report: each region's cycles in slow_cycles, and what they would
    // take more with no P0/P1 pairing in unpaired_extra_cycles (WorkCount.h).
    tm_compute_args args{0, 0, 0, 50, 0, 100, 30};
    athread_spawn(compute_kernel, &args);
    athread_join();
    const athread_emu_kernel_stats &r = last();
    EXPECT_EQ(r.cycles_max, 50 * 100);
    EXPECT_EQ(r.cpe[0].compute_cycles, 50 * 100); // the modelled figures do not see it
    EXPECT_EQ(r.cpe[0].unpaired_extra_cycles, 30 * 100);
    EXPECT_EQ(r.cycles_max_unpaired, 80 * 100);
    EXPECT_GT(r.modelled_unpaired_seconds, r.modelled_seconds);
}

/** Cycles of the slowest CPE for overlap_kernel in `mode`. */
long long run_overlap(int mode, long long compute, int bytes = 16384) {
    Mem src((size_t)kCpes * bytes);
    tm_overlap_args args{src.p, bytes, mode, compute};
    athread_spawn(overlap_kernel, &args);
    athread_join();
    const athread_emu_kernel_stats &r = *athread_emu_stats_get(athread_emu_stats_count() - 1);
    check_roofline(r);
    return r.cycles_max;
}

TEST_F(TimingModel, AsynchronousDmaOverlapsCompute) {
    const long long transfer = run_overlap(2, 0); // get + wait only
    const sw::DmaTiming &t = sw::sw26010().dma_timing;
    // 64 CPEs each get 16 KB (+ 128 line bytes at an aligned start: exactly 16 KB of lines).
    double expect =
        t.get_block_cycles + 64.0 * 16384 / t.get_bytes_per_cycle + t.get_latency_cycles;
    EXPECT_NEAR(transfer, expect, 2);
    const long long compute = 3 * transfer;
    long long overlapped = run_overlap(0, compute); // get, compute, wait
    long long serial = run_overlap(1, compute);     // get, wait, compute
    std::printf("  transfer %lld, compute %lld: overlapped %lld, serial %lld cycles\n", transfer,
                compute, overlapped, serial);
    EXPECT_EQ(overlapped, compute);
    EXPECT_EQ(serial, transfer + compute);
    // P1 work only (nothing to pair): the no-pairing time is the modelled one, DMA included.
    EXPECT_EQ(last().cycles_max_unpaired, last().cycles_max);
    EXPECT_EQ(last().modelled_unpaired_seconds, last().modelled_seconds);
    // Compute shorter than the transfer: the wait covers the rest.
    EXPECT_EQ(run_overlap(0, transfer / 2), transfer);
}

TEST_F(TimingModel, RequestsNeverWaitedCompleteAtJoin) {
    const long long transfer = run_overlap(2, 0);
    EXPECT_EQ(run_overlap(3, 0), transfer); // no athread_emu_wait_reply at all
    const athread_emu_kernel_stats &r = last();
    EXPECT_EQ(r.cpe[0].dma_wait_cycles, transfer);
}

TEST_F(TimingModel, FewerCpesGetLargerShares) {
    // The model: the channel is shared equally by the CPEs moving data, each capped at
    // cpe_cap_bytes_per_cycle [U]; latency and block setup are per CPE and not shared.
    const sw::Machine &m = sw::sw26010();
    std::printf("  active  aggregate GB/s  per CPE GB/s  (copy, 24 KB)\n");
    double prev_per = 1e30, prev_agg = 0;
    for (int active : {1, 2, 4, 8, 16, 32, 64}) {
        double agg = run_stream(24576, false, active, 8);
        double per = agg / active;
        std::printf("  %6d  %14.2f  %12.2f\n", active, agg, per);
        EXPECT_LE(per, prev_per * (1 + 1e-9));
        EXPECT_GE(agg, prev_agg * (1 - 1e-9));
        // One CPE is held at its cap (each of its requests alone on the channel).
        if (active == 1) {
            EXPECT_LE(per, m.dma_timing.cpe_cap_bytes_per_cycle * m.clock_ghz);
        }
        prev_per = per, prev_agg = agg;
    }
}

TEST_F(TimingModel, TraceSpans) {
    athread_emu_set_trace(1);
    run_overlap(0, 100000);
    run_overlap(1, 100000);
    int n = athread_emu_trace_count();
    ASSERT_GT(n, 0);
    const athread_emu_span *s = athread_emu_trace_spans();
    int kinds[4] = {0, 0, 0, 0}, kernels[2] = {0, 0};
    const sw::Machine &m = sw::sw26010();
    for (int i = 0; i < n; i++) {
        ASSERT_GE(s[i].kind, 0);
        ASSERT_LT(s[i].kind, 4);
        kinds[s[i].kind]++;
        ASSERT_GE(s[i].kernel, 0);
        ASSERT_LT(s[i].kernel, 2);
        kernels[s[i].kernel]++;
        EXPECT_LT(s[i].start_cycle, s[i].end_cycle);
        EXPECT_GE(s[i].start_cycle, (long long)m.dma_timing.spawn_cycles);
    }
    EXPECT_EQ(kinds[ATHREAD_EMU_SPAN_COMPUTE], 2 * kCpes); // one merged span per CPE
    EXPECT_EQ(kinds[ATHREAD_EMU_SPAN_DMA], 2 * kCpes);
    EXPECT_EQ(kinds[ATHREAD_EMU_SPAN_WAIT], kCpes); // only the serial one waits
    EXPECT_GT(kernels[0], 0);
    EXPECT_GT(kernels[1], 0);
    // Off: only the last kernel's spans.
    athread_emu_set_trace(0);
    run_overlap(1, 100000);
    for (int i = 0; i < athread_emu_trace_count(); i++)
        EXPECT_EQ(athread_emu_trace_spans()[i].kernel, athread_emu_stats_count() - 1);
    EXPECT_EQ(athread_emu_trace_dropped(), 0);
}

TEST_F(TimingModel, ProMachineMatchesItsPoints) {
    athread_emu_set_machine("sw26010-pro");
    const sw::Machine &m = sw::sw26010_pro();
    for (const sw::DmaPoint &p : m.dma_curve) {
        double copy = run_stream((int)p.bytes_per_request, false);
        double e = (copy - p.copy_gbps) / p.copy_gbps;
        std::printf("  pro %5lld B: measured %5.1f model %5.2f (%+.1f%%)\n",
                    (long long)p.bytes_per_request, p.copy_gbps, copy, 100 * e);
        EXPECT_LT(std::fabs(e), 0.10);
    }
}

} // namespace
