/** \file
 * sw_bench: every AlexNet and VGG-19 layer with the hand Sunway schedules and the
 * OpenACC-style baseline, at batch 1 and 16, on the emulated core group; prints the
 * per-layer tables (modelled SW26010 time) and a last line
 *   RESULT conv_speedup_geomean=<x> fc_speedup_geomean=<x> conv_peak_fraction=<x>
 * fc_dma_fraction=<x> conv/fc_speedup_geomean: geometric means of baseline time / hand time over
 * the conv (FC) layers of both networks at both batches; conv_peak_fraction: VGG-19's conv flops /
 * (its modelled conv time x the core group's peak), at the largest batch run; fc_dma_fraction: the
 * FC layers' DMA bytes (128-byte lines) / their modelled time / the measured DMA plateau (the
 * largest figure of shared/sunway/dma_bandwidth.csv).
 *
 *   sw_bench [--batch1-only]
 */
#include "apps/bench/network_runs.h"
#include "apps/cli_support.h"
#include "runtime/net/report.h"
#include "target_sw/Machine.h"

#include <cmath>
#include <cstdio>

namespace {

struct Totals {
    double log_conv = 0, log_fc = 0;
    int convs = 0, fcs = 0;
    double fc_bytes = 0, fc_seconds = 0;
};

/** The network at \p batch (graph/Networks.h, graph/'s executor), hand and baseline. */
void run(const std::string &name, int batch, Totals &t, double *conv_flops, double *conv_seconds) {
    const std::vector<sw_bench::LayerRun> hand = sw_bench::run_network(name, batch, "hand");
    const std::vector<sw_bench::LayerRun> base = sw_bench::run_network(name, batch, "baseline");
    std::printf("\n== %s, batch %d ==", name.c_str(), batch);
    const std::vector<sw_net::LayerRecord> base_records = sw_bench::records_of(base);
    sw_net::print_table(sw_bench::records_of(hand), &base_records, sw::sw26010());
    *conv_flops = *conv_seconds = 0;
    for (size_t i = 0; i < hand.size(); i++) {
        const sw_net::LayerRecord &h = hand[i].record;
        const double ratio = base[i].record.modelled_seconds / h.modelled_seconds;
        if (hand[i].generator == "conv2d") {
            t.log_conv += std::log(ratio);
            t.convs++;
            *conv_flops += h.gflop * 1e9;
            *conv_seconds += h.modelled_seconds;
        } else if (hand[i].generator == "dense") {
            t.log_fc += std::log(ratio);
            t.fcs++;
            t.fc_bytes += double(h.dma_line_bytes);
            t.fc_seconds += h.modelled_seconds;
        }
    }
}

} // namespace

int main(int argc, char **argv) {
    CLI::App app{"Every AlexNet and VGG-19 layer, hand Sunway schedule vs the OpenACC-style "
                 "baseline, at batch 1 "
                 "and 16, on the emulated SW26010 core group (modelled time)."};
    app.name("sw_bench");
    bool batch1_only = false;
    app.add_flag("--batch1-only", batch1_only, "run batch 1 only (not the batch-16 networks)");
    if (int rc = sw_cli::parse(app, argc, argv); rc >= 0)
        return rc;
    const sw::Machine &m = sw::sw26010();
    Totals t;
    double vgg_flops = 0, vgg_seconds = 0, flops, seconds;
    run("alexnet", 1, t, &flops, &seconds);
    run("vgg19", 1, t, &vgg_flops, &vgg_seconds);
    if (!batch1_only) {
        run("alexnet", 16, t, &flops, &seconds);
        run("vgg19", 16, t, &vgg_flops, &vgg_seconds);
    }
    double plateau = 0;
    for (const sw::DmaPoint &p : m.dma_curve)
        plateau = std::max({plateau, p.copy_gbps, p.triad_gbps});
    std::printf("\nconv layers: %d, FC layers: %d (both networks%s); peak %.1f GFLOPS, DMA plateau "
                "%.1f GB/s\n",
                t.convs, t.fcs, batch1_only ? ", batch 1" : ", batch 1 and 16", m.cg_peak_gflops(),
                plateau);
    std::printf("RESULT conv_speedup_geomean=%.3f fc_speedup_geomean=%.3f conv_peak_fraction=%.4f "
                "fc_dma_fraction=%.3f\n",
                std::exp(t.log_conv / t.convs), std::exp(t.log_fc / t.fcs),
                vgg_flops / (vgg_seconds * m.cg_peak_gflops() * 1e9),
                t.fc_bytes / t.fc_seconds / 1e9 / plateau);
    return 0;
}
