/** \file
 * model_calibration: the SW26010 timing model (target_sw/emulator/src/timing.cpp, parameters
 * in target_sw/Machine.h) next to the published measurements it was fitted to
 * (tools/fit_dma_model.py). Every figure is run on the athread emulator with hand-written
 * CPE kernels (benchlib/timing_model_kernels.c, benchlib/timing_model_dma_kernels.c; the
 * runs are benchlib/timing_model_runs.h, shared with tests/timing_model_test.cpp) and read
 * from the modelled time (spawn and join included).
 *
 * Sections (one function each, each prints a table and returns its worst error):
 *  1. CAND's STREAM copy/triad curve (shared/sunway/dma_bandwidth.csv = Machine.h's
 *     dma_curve): every point; the error counts from 128 B (sub-line points are reported).
 *  2. CAND's strided copy ranges (SW26010.md, 24 KB per descriptor): error = distance to the
 *     nearer end of the range, 0 inside.
 *  3. Reads only: 64 CPEs reading 4 KB blocks (read_only_gbps) and swDNN's "Multiple DMA
 *     Read" test, per shape, against swDNN's run.log.
 *  4. swDNN's conv shapes (34x34 -> 32x32, K=3, Ni=384/No=128 and Ni=128/No=128) scheduled by
 *     the autoscheduler and run on the emulator (`autoschedule --tune 1`, batch 1): modelled
 *     GFLOPS over swDNN's best measured GFLOPS per core group, worst ratio. Not like for like:
 *     swDNN computes in fp64, which moves twice the bytes at the same peak (floatv4 and
 *     doublev4 are both 4 lanes), and our plan is bound by DMA on these shapes. So the section
 *     also prints the equal-bytes bound: the same plan's DMA line bytes doubled, read at the
 *     model's read plateau alone (get_bytes_per_cycle x clock, no setup, latency or compute),
 *     an upper bound on what the model could give the plan in fp64, over swDNN's figure.
 *  5. The autoscheduler's cost model against the emulator's timing model on every layer it
 *     schedules for AlexNet and VGG-19 and on the shapes of section 4, worst relative error.
 * Last line:
 *   RESULT dma_curve_max_err=<fraction> read_only_gbps=<GB/s>
 *          swdnn_conv_model_over_measured_max=<ratio>
 * swdnn_conv_fp64_bound_over_measured_max=<ratio> cost_model_vs_emulator_max_err=<fraction>
 * dma_curve_max_err is the worst relative error over sections 1 (from 128 B) and 2.
 *
 * With --machine sw26010-pro: what the Pro's published figures allow: its four DMA points
 * (OPS) against the model, and section 5 on the Pro (the autoscheduler's Pro plans for AlexNet
 * and VGG-19 against the emulator); last line
 *   RESULT machine=sw26010-pro dma_points_max_err=<fraction> cost_model_vs_emulator_max_err=<f>
 *
 * Build and run: cmake --build build --target model_calibration &&
 * build/apps/bench/model_calibration [--machine sw26010-pro]
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <athread.h>
#include <athread_emu.h>

#include "apps/bench/bench_support.h"
#include "apps/bench/network_runs.h"
#include "benchlib/timing_model_runs.h"
#include "target_sw/Machine.h"

namespace {

using tm_runs::dma_only;
using tm_runs::stream;
using tm_runs::strided;

/** Relative distance of m to [lo, hi] (0 inside), signed. */
double range_error(double m, double lo, double hi) {
    if (m < lo)
        return (m - lo) / lo;
    if (m > hi)
        return (m - hi) / hi;
    return 0;
}

/** Section 1: CAND's copy/triad curve. Returns the worst |error| from 128 B. */
double section_dma_curve() {
    std::printf("== 1. STREAM copy/triad, one CG, 64 CPEs, blocking DMA (CAND, "
                "shared/sunway/dma_bandwidth.csv), GB/s\n");
    std::printf("  bytes | copy: CAND  model   error | triad: CAND  model   error\n");
    double worst = 0;
    for (const sw::DmaPoint &p : sw::sw26010().dma_curve) {
        const double copy = stream((int)p.bytes_per_request, false).gbps;
        const double triad = stream((int)p.bytes_per_request, true).gbps;
        const double ec = (copy - p.copy_gbps) / p.copy_gbps,
                     et = (triad - p.triad_gbps) / p.triad_gbps;
        const bool fitted = p.bytes_per_request >= 128;
        if (fitted)
            worst = std::max({worst, std::fabs(ec), std::fabs(et)});
        std::printf("  %5lld |      %5.2f  %5.2f  %+6.1f%% |       %5.2f  %5.2f  %+6.1f%%%s\n",
                    (long long)p.bytes_per_request, p.copy_gbps, copy, 100 * ec, p.triad_gbps,
                    triad, 100 * et, fitted ? "" : "  (sub-line: reported only)");
    }
    std::printf("  worst from 128 B: %.1f%%\n\n", 100 * worst);
    return worst;
}

/** Section 2: CAND's strided copy ranges. Returns the worst distance to a range. */
double section_strided() {
    std::printf(
        "== 2. Strided copy, 24 KB per descriptor (CAND, SW26010.md \"Strided DMA\"), GB/s\n");
    std::printf("  block    gap | CAND range    model   error (0 inside)\n");
    double worst = 0;
    for (const auto &r : tm_runs::cand_strided_ranges()) {
        for (int gap : {r.bsize / 2, 3 * r.bsize}) {
            const double m = strided(r.bsize, gap).gbps;
            const double e = range_error(m, r.lo, r.hi);
            worst = std::max(worst, std::fabs(e));
            std::printf("  %5d  %5d | %5.1f-%5.1f  %6.2f  %+6.1f%%\n", r.bsize, gap, r.lo, r.hi, m,
                        100 * e);
        }
    }
    std::printf("  worst: %.1f%%\n\n", 100 * worst);
    return worst;
}

/** Section 3: reads only. Returns read_only_gbps (64 CPEs, blocking 4 KB contiguous gets). */
double section_reads_only() {
    std::printf("== 3. Reads only, GB/s\n");
    const double read_only = tm_runs::read_plateau().gbps;
    const sw::DmaTiming &t = sw::sw26010().dma_timing;
    std::printf("  64 CPEs x 256 blocking 4 KB contiguous gets: model %.2f (evidence: swDNN "
                "typically 21-24, CAND's decomposed gets 26.6-28.5; get channel %.2f GB/s, "
                "cap %.1f; DDR3 theoretical %.1f)\n",
                read_only, t.get_bytes_per_cycle * sw::sw26010().clock_ghz, t.get_cap_gbps,
                sw::sw26010().dma_theoretical_gbps);
    // swDNN (feifeibear/swDNN swCNNv12-4cg-opt-batch-size-aware test.c DMA_banchmark +
    // swCNNv13 dma.c dma_read; figures from swCNNv12's run.log): per spawn, 64 CPEs x 20
    // blocking gets of B/8 x Ni/8 doubles in blocks of B/8 doubles, 8 blocks apart, all CPEs
    // the same addresses; timed over 10 spawn/join pairs.
    std::printf("  swDNN \"Multiple DMA Read\" (20 strided gets per CPE per spawn, spawn and join "
                "included):\n");
    std::printf("  shape          get  block | swDNN runs    model   error (0 inside)\n");
    struct {
        int B, Ni;
        double lo, hi;
        const char *runs;
    } shapes[] = {
        {128, 128, 20.9, 22.1, "5 runs; a 6th (first) run 16.8"},
        {128, 320, 21.3, 24.3, "13 runs"},
        {256, 128, 26.0, 26.0, "1 run"},
    };
    double worst = 0;
    for (auto &s : shapes) {
        const int bsize = s.B / 8 * 8, bytes = s.B / 8 * s.Ni / 8 * 8;
        const double m = dma_only(bytes, bsize, 7 * bsize, 20, true).gbps;
        const double e = range_error(m, s.lo, s.hi);
        worst = std::max(worst, std::fabs(e));
        std::printf("  B=%3d Ni=%3d %5d  %5d | %5.1f-%5.1f  %6.2f  %+6.1f%%  (%s)\n", s.B, s.Ni,
                    bytes, bsize, s.lo, s.hi, m, 100 * e, s.runs);
    }
    std::printf("  worst swDNN shape: %.1f%% (all shapes against all runs, 16.8-26.0: inside)\n\n",
                100 * worst);
    return read_only;
}

/** The convolutions of swDNN's logs (SW26010.md, "Measured kernels"): 34x34 -> 32x32, K=3, no
 *  padding, one core group. Best measured GFLOPS per core group: Ni=384/No=128, B=128:
 *  253-294 (one CG); Ni=128/No=128, B=128: 1380.8 on 4 CGs = 345.2 per CG. Ours runs at batch
 *  1 (emulating batch 128 would take hours here); a larger batch only adds tiles. */
struct SwdnnShape {
    int ni, no;
    double measured_gflops;
};
const SwdnnShape kSwdnn[] = {{384, 128, 294.0}, {128, 128, 345.2}};

std::string swdnn_params(const SwdnnShape &c) {
    return "conv2d batch=1 in_channels=" + std::to_string(c.ni) +
           " out_channels=" + std::to_string(c.no) +
           " height=34 width=34 kernel=3 stride=1 pad=0 relu=false";
}

std::vector<sw_bench::TunedLayer> &swdnn_runs() {
    static std::vector<sw_bench::TunedLayer> runs;
    return runs;
}

/** Section 4; also returns, in \p worst_fp64_bound, the worst equal-bytes bound over swDNN's
 *  figure (see the file comment). */
double section_swdnn_conv(double *worst_fp64_bound) {
    std::printf("== 4. swDNN conv shapes (34x34 -> 32x32, K=3, no padding), our best plan on the "
                "emulator\n");
    std::printf("  %-18s %9s %9s %12s %12s %8s %10s %8s  plan\n", "shape", "ours ms", "GFLOPS",
                "swDNN GFLOPS", "peak share", "ratio", "fp64 bound", "ratio");
    const sw::Machine &m = sw::sw26010();
    const double peak = m.cg_peak_gflops();
    const double plateau = m.dma_timing.get_bytes_per_cycle * m.clock_ghz * 1e9; // bytes/s
    double worst = 0;
    *worst_fp64_bound = 0;
    for (const SwdnnShape &c : kSwdnn) {
        const sw_bench::TunedLayer t =
            sw_bench::tune_one(sw_bench::autoschedule_cli(), swdnn_params(c));
        swdnn_runs().push_back(t);
        if (t.emulated_ms <= 0) {
            std::printf("  Ni=%d No=%d: the autoschedule CLI failed\n", c.ni, c.no);
            return std::nan("");
        }
        const double flops = 2.0 * c.ni * c.no * 32 * 32 * 9;
        const double gflops = flops / (t.emulated_ms * 1e-3) / 1e9,
                     ratio = gflops / c.measured_gflops;
        worst = std::max(worst, ratio);
        // In fp64 the same plan would move twice the line bytes; the read plateau alone then
        // takes 2 x line bytes / plateau seconds.
        const double bound =
            t.line_bytes > 0 ? std::min(peak, flops / (2 * t.line_bytes / plateau) / 1e9) : NAN;
        *worst_fp64_bound = std::max(*worst_fp64_bound, bound / c.measured_gflops);
        std::printf("  Ni=%-3d No=%-3d B=1    %9.3f %9.1f %12.1f %11.1f%% %8.3f %10.1f %8.3f  %s\n",
                    c.ni, c.no, t.emulated_ms, gflops, c.measured_gflops, 100 * gflops / peak,
                    ratio, bound, bound / c.measured_gflops, t.plan.c_str());
    }
    std::printf("  swDNN's kernels are hand assembly with register communication and 4x4 register "
                "blocks, in\n"
                "  fp64. The fp64 bound: our plan moving twice its bytes at the same peak, capped "
                "by the read\n"
                "  plateau (the peak where the plan shares its input across the mesh and reads "
                "little). A ratio\n"
                "  above 1 means the model rates our plain C kernels above swDNN's measured "
                "assembly even at\n"
                "  equal bytes: the compute side assumes ideal P0/P1 pairing, which no public "
                "measurement of\n"
                "  compiled SIMD loops checks; the fp32 ratio compares unlike arithmetic "
                "(docs/timing-model.md,\n"
                "  \"What the timing model cannot know\").\n\n");
    return worst;
}

/** The autoscheduler's cost model against the emulator's timing model on every plan it picks
 *  for AlexNet and VGG-19 (the networks' autoscheduled layers run once, predictions from
 *  `autoschedule --net`) and for the swDNN shapes of section 4; worst relative error. */
double section_cost_model_vs_emulator(const std::string &machine = "sw26010") {
    std::printf("== 5. Cost model (autoscheduler) vs emulator (timing model), every autoscheduled "
                "layer, %s\n",
                machine.c_str());
    double worst = 0;
    std::string worst_name;
    auto note = [&](const std::string &name, double pred, double emu) {
        const double e = std::fabs(pred - emu) / emu;
        std::printf("  %-16s predicted %9.4g ms  emulator %9.4g ms  %+6.1f%%\n", name.c_str(), pred,
                    emu, 100 * (pred / emu - 1));
        if (e > worst)
            worst = e, worst_name = name;
    };
    for (size_t i = 0; i < swdnn_runs().size(); i++) {
        const sw_bench::TunedLayer &t = swdnn_runs()[i];
        if (t.emulated_ms > 0)
            note("swDNN Ni=" + std::to_string(kSwdnn[i].ni), t.predicted_ms, t.emulated_ms);
    }
    for (const std::string net : {"alexnet", "vgg19"}) {
        std::vector<double> predicted;
        if (sw_bench::schedule_network(sw_bench::autoschedule_cli(), net, &predicted, machine) <
            0) {
            std::printf("  %s: the autoschedule CLI failed\n", net.c_str());
            return std::nan("");
        }
        // The autoscheduled network as sw_net --net runs it (graph/'s executor); its layer
        // steps are in the order of autoschedule --net's table.
        const std::vector<sw_net::LayerRecord> autos =
            sw_bench::records_of(sw_bench::run_network(net, 1, "auto", nullptr, machine));
        for (size_t i = 0; i < autos.size() && i < predicted.size(); i++) {
            note(net + " " + autos[i].name, predicted[i], autos[i].modelled_seconds * 1e3);
        }
    }
    std::printf("  worst: %.1f%% (%s)\n\n", 100 * worst, worst_name.c_str());
    return worst;
}

/** SW26010-Pro, section P1: the four published DMA points (OPS: SYSU-SCC/swops, one CG,
 *  copy = triad assumed; shared/sunway/SW26010-Pro.md) against the model's STREAM copy on the
 *  Pro's parameters. Returns the worst |error|. */
double section_pro_dma_points() {
    std::printf("== P1. DMA per request size, one CG, 64 CPEs (OPS, the only published Pro points; "
                "[U]: one source, method unclear), GB/s\n");
    std::printf("  bytes | OPS    model   error\n");
    double worst = 0;
    for (const sw::DmaPoint &p : sw::sw26010_pro().dma_curve) {
        const double copy = stream((int)p.bytes_per_request, false).gbps;
        const double e = (copy - p.copy_gbps) / p.copy_gbps;
        worst = std::max(worst, std::fabs(e));
        std::printf("  %5lld | %5.2f  %5.2f  %+6.1f%%\n", (long long)p.bytes_per_request,
                    p.copy_gbps, copy, 100 * e);
    }
    std::printf("  worst: %.1f%%\n\n", 100 * worst);
    return worst;
}

/** model_calibration --machine sw26010-pro: what can be compared on the Pro. */
int pro_main() {
    const sw::Machine &m = sw::sw26010_pro();
    std::printf("SW26010-Pro timing model: %.2f GHz, %.0f GFLOPS per core group (fp32 taken "
                "equal to fp64 [U]), DMA get plateau %.1f GB/s (fitted to OPS), DDR4 %.1f GB/s "
                "theoretical.\n"
                "No Pro measurement of strided or reads-only DMA, of RMA, of instruction costs "
                "or of a DL kernel is public: sections 2-4 of the SW26010 calibration have no "
                "Pro counterpart, and every figure of the Pro model rests on unmeasured "
                "parameters ([U] in target_sw/Machine.h: Rma, splat_p1, pairing, latencies).\n\n",
                m.clock_ghz, m.cg_peak_gflops(), m.dma_get_plateau_gbps(), m.dma_theoretical_gbps);
    athread_emu_set_machine("sw26010-pro");
    athread_init();
    const double points = section_pro_dma_points();
    athread_emu_set_machine("sw26010");
    const double cost = section_cost_model_vs_emulator("sw26010-pro");
    std::printf("RESULT machine=sw26010-pro dma_points_max_err=%.4f "
                "cost_model_vs_emulator_max_err=%.4f\n",
                points, cost);
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    std::string machine = "sw26010";
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--machine" && i + 1 < argc) {
            machine = argv[++i];
        } else {
            std::fprintf(stderr,
                         "error: unknown argument '%s' (model_calibration [--machine "
                         "sw26010|sw26010-pro])\n",
                         a.c_str());
            return 1;
        }
    }
    if (machine == "sw26010-pro")
        return pro_main();
    if (machine != "sw26010") {
        std::fprintf(stderr, "error: --machine %s: sw26010 or sw26010-pro\n", machine.c_str());
        return 1;
    }
    athread_emu_set_machine("sw26010");
    athread_init();
    const double curve = section_dma_curve();
    const double strided = section_strided();
    const double read_only = section_reads_only();
    athread_halt();
    double fp64_bound = NAN;
    const double conv = section_swdnn_conv(&fp64_bound);
    const double cost = section_cost_model_vs_emulator();
    std::printf(
        "RESULT dma_curve_max_err=%.4f read_only_gbps=%.2f swdnn_conv_model_over_measured_max=%.3f "
        "swdnn_conv_fp64_bound_over_measured_max=%.3f cost_model_vs_emulator_max_err=%.4f\n",
        std::max(curve, strided), read_only, conv, fp64_bound, cost);
    return 0;
}
