/** \file
 * auto_bench: every AlexNet and VGG-19 layer (batch 1) scheduled by the Sunway
 * autoscheduler, by hand and by the OpenACC-style baseline, run side by side on the emulated
 * core group (modelled SW26010 time of the emulator's timing model), with the model's own
 * prediction for the autoscheduled layer and the time the autoscheduler took for each
 * network (the autoschedule CLI's --net run).
 *
 * Per layer, for the hand and the autoscheduled library (the "hand" and "auto" columns):
 *  - %peak: the layer's analytic flops / (modelled time x Machine::cg_peak_gflops());
 *  - rd%: the layer's DMA get line bytes (128-byte lines the gets touch) / modelled time,
 *    over the model's read plateau (below);
 *  - CPE c/d/s/o %: where the time goes on the busiest CPE of each of the layer's kernels
 *    (the one whose cycles set the kernel's time; summed over kernels), as shares of the
 *    layer's modelled time: compute (reported work), DMA wait (blocked on replies and the
 *    final drain), sync (athread_syn) + register-communication wait, and overhead (spawn,
 *    join and the rest).
 * The read plateau is the fastest the timing model lets a core group read: its DMA channel
 * when only gets move (DmaTiming::get_bytes_per_cycle x clock, 28.49 GB/s of line bytes on
 * sw26010, at the get cap that measurements support). The rate of 64 CPEs each making 256
 * blocking contiguous 4 KB gets (tm_runs::read_plateau, model_calibration's read_only_gbps,
 * 26.56 GB/s) is printed beside it: pipelined gets go faster than that benchmark, so it is not
 * the ceiling. Last lines:
 *   SUMMARY auto_vs_hand_geomean=<x> auto_within_10pct_of_hand=<f> auto_beats_hand=<f>
 *           hand_vgg19_conv_peak_fraction=<x> hand_alexnet_conv_peak_fraction=<x>
 * hand_fc_read_fraction=<x> RESULT vgg19_conv_peak_fraction=<x> alexnet_conv_peak_fraction=<x>
 * fc_read_fraction=<x> auto_vs_hand_min=<x> schedule_seconds_vgg19=<s> fc_read_fraction_b16=<x>
 * RESULT is for the autoscheduled networks: <net>_conv_peak_fraction = the net's conv flops /
 * (its conv layers' total modelled time x peak); fc_read_fraction = the FC layers of both
 * networks: the bytes each must read (weights + bias + input, fp32) summed, over their summed
 * modelled time, over the read plateau; auto_vs_hand_min = the smallest hand time / auto time
 * over the layers of both networks (> 1: the autoscheduler is faster on every layer);
 * schedule_seconds_vgg19 = wall time of `autoschedule --net vgg19` on this machine;
 * fc_read_fraction_b16 = fc_read_fraction of the same FC layers at batch 16 (each
 * autoscheduled and emulated by `autoschedule --tune 1`, its own section). SUMMARY:
 * the geometric mean of hand / auto, the share of layers whose auto time is at most 1.1 x the
 * hand time and the share where it is lower, and the RESULT fractions of the hand schedules.
 *
 *   auto_bench
 */
#include "apps/bench/bench_support.h"
#include "apps/bench/network_runs.h"
#include "benchlib/timing_model_runs.h"
#include "target_sw/Machine.h"

#include <athread.h>
#include <athread_emu.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace {

/** The RESULT figures of one schedule, summed over layers. */
struct Sums {
    double conv_flops = 0, conv_seconds = 0; ///< this network's conv layers
    double fc_bytes = 0, fc_seconds = 0;     ///< FC layers of every network run so far
    double conv_fraction(double peak_gflops) const {
        return conv_flops / (conv_seconds * peak_gflops * 1e9);
    }
    double fc_fraction(double plateau_gbps) const {
        return fc_bytes / fc_seconds / 1e9 / plateau_gbps;
    }
};

struct Totals {
    double log_ratio = 0;
    int layers = 0, within = 0, beats = 0;
    double min_ratio = std::numeric_limits<double>::infinity();
    std::string min_ratio_layer;
    double worst_model_error = 0; ///< |predicted - emulated| / emulated, autoscheduled layers
    std::string worst_model_layer;
    Sums hand_fc, auto_fc; // FC sums over both networks (conv sums are per network)
    double hand_conv_fraction[2] = {0, 0}, auto_conv_fraction[2] = {0, 0}; // alexnet, vgg19
};

/** Bytes a dense layer must read: weights, bias and its input (fp32). */
double dense_read_bytes(const sw_bench::LayerRun &l) {
    const double out = std::stod(l.params.at("out_features")),
                 in = std::stod(l.params.at("in_features"));
    return 4.0 * (out * in + out + double(l.input_elements));
}

/** "c/d/s/o" percentages of the busiest CPEs' time (see the file comment). */
std::string cpe_breakdown(const sw_net::LayerRecord &r) {
    const double t = r.modelled_seconds;
    const double c = r.busiest_compute_seconds / t, d = r.busiest_dma_wait_seconds / t,
                 s = (r.busiest_sync_wait_seconds + r.busiest_regcomm_wait_seconds) / t;
    const double o = std::max(0.0, 1 - c - d - s);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%3.0f/%3.0f/%3.0f/%3.0f", 100 * c, 100 * d, 100 * s, 100 * o);
    return buf;
}

/** The network (graph/Networks.h) through graph/'s executor, hand, baseline and autoscheduled. */
void run(const std::string &name, int net_index, Totals &t, const std::vector<double> &predicted,
         double peak_gflops, double plateau_gbps) {
    std::vector<float> yh, ya;
    const std::vector<sw_bench::LayerRun> hand_runs = sw_bench::run_network(name, 1, "hand", &yh);
    const std::vector<sw_bench::LayerRun> base_runs = sw_bench::run_network(name, 1, "baseline");
    const std::vector<sw_bench::LayerRun> auto_runs = sw_bench::run_network(name, 1, "auto", &ya);
    const std::vector<sw_net::LayerRecord> hand = sw_bench::records_of(hand_runs),
                                           base = sw_bench::records_of(base_runs),
                                           autos = sw_bench::records_of(auto_runs);
    double worst = 0;
    for (size_t i = 0; i < yh.size(); i++)
        worst = std::max(worst, double(std::fabs(yh[i] - ya[i])));
    std::printf(
        "\n== %s, batch 1 (modelled SW26010 ms; auto and hand outputs differ by at most %.2g) ==\n",
        name.c_str(), worst);
    std::printf("%-8s %-9s %10s %10s %10s %10s %9s %9s %7s %7s %7s %7s %-15s %-15s\n", "layer",
                "kind", "baseline", "hand", "auto", "auto pred", "pred err", "hand/auto", "hand",
                "auto", "hand", "auto", "hand CPE", "auto CPE");
    std::printf("%-8s %-9s %10s %10s %10s %10s %9s %9s %7s %7s %7s %7s %-15s %-15s\n", "", "", "",
                "", "", "", "", "", "%peak", "%peak", "rd%", "rd%", "c/d/s/o %", "c/d/s/o %");
    Sums hs, as;
    for (size_t i = 0; i < hand.size(); i++) {
        const sw_net::LayerRecord &rh = hand[i], &ra = autos[i];
        const double h = rh.modelled_seconds, a = ra.modelled_seconds, b = base[i].modelled_seconds;
        const double ratio = h / a;
        const double pred = i < predicted.size() ? predicted[i] : -1.0, err = pred / (a * 1e3) - 1;
        auto peak_pct = [&](const sw_net::LayerRecord &r) {
            return 100 * r.gflop / (r.modelled_seconds * peak_gflops);
        };
        auto read_pct = [&](const sw_net::LayerRecord &r) {
            return 100 * double(r.dma_get_line_bytes) / r.modelled_seconds / 1e9 / plateau_gbps;
        };
        std::printf("%-8s %-9s %10.3f %10.3f %10.3f %10.4g %+8.1f%% %9.2f %7.1f %7.1f %7.1f %7.1f "
                    "%-15s %-15s\n",
                    rh.name.c_str(), rh.kind.c_str(), b * 1e3, h * 1e3, a * 1e3, pred, 100 * err,
                    ratio, peak_pct(rh), peak_pct(ra), read_pct(rh), read_pct(ra),
                    cpe_breakdown(rh).c_str(), cpe_breakdown(ra).c_str());
        if (std::fabs(err) > t.worst_model_error) {
            t.worst_model_error = std::fabs(err);
            t.worst_model_layer = name + " " + rh.name;
        }
        if (ratio < t.min_ratio) {
            t.min_ratio = ratio;
            t.min_ratio_layer = name + " " + rh.name;
        }
        t.log_ratio += std::log(ratio);
        t.layers++;
        t.within += a <= 1.1 * h;
        t.beats += a < h;
        if (hand_runs[i].generator == "conv2d") {
            hs.conv_flops += rh.gflop * 1e9, hs.conv_seconds += h;
            as.conv_flops += ra.gflop * 1e9, as.conv_seconds += a;
        } else if (hand_runs[i].generator == "dense") {
            const double bytes = dense_read_bytes(hand_runs[i]);
            hs.fc_bytes += bytes, hs.fc_seconds += h;
            as.fc_bytes += bytes, as.fc_seconds += a;
        }
    }
    t.hand_conv_fraction[net_index] = hs.conv_fraction(peak_gflops);
    t.auto_conv_fraction[net_index] = as.conv_fraction(peak_gflops);
    std::printf("%s conv layers: %.3f GFLOP; auto %.3f ms = %.1f%% of peak, hand %.3f ms = %.1f%% "
                "of peak\n",
                name.c_str(), as.conv_flops / 1e9, as.conv_seconds * 1e3,
                100 * t.auto_conv_fraction[net_index], hs.conv_seconds * 1e3,
                100 * t.hand_conv_fraction[net_index]);
    if (as.fc_seconds > 0) {
        std::printf("%s FC layers: %.2f MB to read (weights + bias + input, fp32); auto %.3f ms = "
                    "%.2f GB/s = "
                    "%.3f of the read plateau, hand %.3f ms = %.2f GB/s = %.3f\n",
                    name.c_str(), as.fc_bytes / 1e6, as.fc_seconds * 1e3,
                    as.fc_bytes / as.fc_seconds / 1e9, as.fc_fraction(plateau_gbps),
                    hs.fc_seconds * 1e3, hs.fc_bytes / hs.fc_seconds / 1e9,
                    hs.fc_fraction(plateau_gbps));
    }
    t.hand_fc.fc_bytes += hs.fc_bytes, t.hand_fc.fc_seconds += hs.fc_seconds;
    t.auto_fc.fc_bytes += as.fc_bytes, t.auto_fc.fc_seconds += as.fc_seconds;
}

/** The FC layers of both networks at batch 16, each autoscheduled and run on the emulator by
 * the autoschedule CLI (`--tune 1`; the networks run at batch 1): per layer the
 * plan, the prediction and the modelled time, and the bytes read over the read plateau. Returns
 * the fraction of all of them (bytes summed over time summed), or -1 if a run failed. */
double fc_batch16(const std::vector<std::string> &nets, double plateau_gbps, double *worst_err) {
    const int batch = 16;
    std::printf("\n== FC layers at batch %d (autoscheduled; modelled SW26010 ms) ==\n", batch);
    std::printf("%-8s %-8s %6s %6s %10s %10s %9s %7s  plan\n", "net", "layer", "in", "out", "auto",
                "auto pred", "pred err", "rd%");
    double bytes = 0, seconds = 0;
    for (const std::string &net : nets) {
        for (const auto &[layer, spec] : sw_bench::network_layers(net)) {
            if (spec.generator != "dense")
                continue;
            const int64_t in = std::stoll(spec.params.at("in_features")),
                          out = std::stoll(spec.params.at("out_features"));
            const sw_bench::TunedLayer t = sw_bench::tune_one(
                sw_bench::autoschedule_cli(),
                "dense batch=" + std::to_string(batch) + " in_features=" + std::to_string(in) +
                    " out_features=" + std::to_string(out) + " relu=" + spec.params.at("relu"));
            if (t.emulated_ms <= 0)
                return -1;
            const double b = 4.0 * double(out * in + out + int64_t(batch) * in),
                         sec = t.emulated_ms * 1e-3;
            const double err = t.predicted_ms / t.emulated_ms - 1;
            *worst_err = std::max(*worst_err, std::fabs(err));
            bytes += b, seconds += sec;
            std::printf("%-8s %-8s %6lld %6lld %10.3f %10.3f %+8.1f%% %7.1f  %s\n", net.c_str(),
                        layer.c_str(), (long long)in, (long long)out, t.emulated_ms, t.predicted_ms,
                        100 * err, 100 * b / sec / 1e9 / plateau_gbps, t.plan.c_str());
        }
    }
    const double f = bytes / seconds / 1e9 / plateau_gbps;
    std::printf("FC layers at batch %d: %.2f MB to read (weights + bias + input, fp32) in %.3f ms "
                "= %.2f GB/s = %.3f "
                "of the read plateau\n",
                batch, bytes / 1e6, seconds * 1e3, bytes / seconds / 1e9, f);
    return f;
}

} // namespace

int main() {
    const sw::Machine *m = sw::machine_by_name(athread_emu_machine_name());
    if (!m) {
        std::fprintf(stderr, "error: unknown emulator machine '%s'\n", athread_emu_machine_name());
        return 1;
    }
    athread_init();
    const double blocking_4k = tm_runs::read_plateau().gbps;
    athread_halt();
    const double plateau = m->dma_timing.get_bytes_per_cycle * m->clock_ghz;
    const double peak = m->cg_peak_gflops();

    Totals t;
    std::vector<double> pred_alexnet, pred_vgg;
    const double s_alexnet =
        sw_bench::schedule_network(sw_bench::autoschedule_cli(), "alexnet", &pred_alexnet);
    const double s_vgg =
        sw_bench::schedule_network(sw_bench::autoschedule_cli(), "vgg19", &pred_vgg);
    if (s_alexnet < 0 || s_vgg < 0) {
        std::fprintf(stderr, "error: the autoschedule CLI failed (%s)\n",
                     sw_bench::autoschedule_cli().c_str());
        return 1;
    }
    std::printf("machine %s: peak %.1f GFLOPS; read plateau %.2f GB/s (the modelled DMA channel "
                "when only gets "
                "move; 64 CPEs x 256 blocking 4 KB contiguous gets reach %.2f GB/s)\n",
                athread_emu_machine_name(), peak, plateau, blocking_4k);
    std::printf("columns: %%peak = analytic flops / (modelled time x peak); rd%% = DMA get line "
                "bytes (128-byte "
                "lines) per modelled second / read plateau;\n  CPE c/d/s/o = busiest CPE of each "
                "kernel: compute / "
                "DMA wait / sync + register-communication wait / overhead (spawn, join, rest), %% "
                "of modelled "
                "time\n");
    run("alexnet", 0, t, pred_alexnet, peak, plateau);
    run("vgg19", 1, t, pred_vgg, peak, plateau);
    double b16_err = 0;
    const double fc16 = fc_batch16({"alexnet", "vgg19"}, plateau, &b16_err);
    if (fc16 < 0) {
        std::fprintf(stderr, "error: the autoschedule CLI failed on an FC layer at batch 16 (%s)\n",
                     sw_bench::autoschedule_cli().c_str());
        return 1;
    }
    std::printf(
        "\nautoscheduler time (autoschedule --net, this machine): alexnet %.2f s, vgg19 %.2f s\n",
        s_alexnet, s_vgg);
    std::printf("cost model vs emulator (autoscheduled layers): worst %.1f%% (%s); FC at batch 16: "
                "worst %.1f%%\n",
                100 * t.worst_model_error, t.worst_model_layer.c_str(), 100 * b16_err);
    std::printf("FC layers of both networks (bytes read = weights + bias + input, fp32): auto %.2f "
                "GB/s, hand %.2f "
                "GB/s; read plateau %.2f GB/s\n",
                t.auto_fc.fc_bytes / t.auto_fc.fc_seconds / 1e9,
                t.hand_fc.fc_bytes / t.hand_fc.fc_seconds / 1e9, plateau);
    std::printf("smallest hand/auto: %.3f (%s)\n", t.min_ratio, t.min_ratio_layer.c_str());
    std::printf(
        "SUMMARY auto_vs_hand_geomean=%.3f auto_within_10pct_of_hand=%.3f auto_beats_hand=%.3f "
        "hand_vgg19_conv_peak_fraction=%.4f hand_alexnet_conv_peak_fraction=%.4f "
        "hand_fc_read_fraction=%.3f\n",
        std::exp(t.log_ratio / t.layers), double(t.within) / t.layers, double(t.beats) / t.layers,
        t.hand_conv_fraction[1], t.hand_conv_fraction[0], t.hand_fc.fc_fraction(plateau));
    std::printf("RESULT vgg19_conv_peak_fraction=%.4f alexnet_conv_peak_fraction=%.4f "
                "fc_read_fraction=%.3f "
                "auto_vs_hand_min=%.3f schedule_seconds_vgg19=%.2f fc_read_fraction_b16=%.3f\n",
                t.auto_conv_fraction[1], t.auto_conv_fraction[0], t.auto_fc.fc_fraction(plateau),
                t.min_ratio, s_vgg, fc16);
    return 0;
}
