/** \file
 * auto_bench: every AlexNet and VGG-19 layer (batch 1) scheduled by the Sunway
 * autoscheduler, by hand and by the OpenACC-style baseline, run side by side on the emulated
 * core group (modelled SW26010 time of the emulator's timing model), with the model's own
 * prediction for the autoscheduled layer and the time the autoscheduler took for each
 * network (the autoschedule CLI's --net run). Last line:
 *   RESULT auto_vs_hand_geomean=<x> auto_within_10pct_of_hand=<f> auto_beats_hand=<f> schedule_seconds_vgg19=<s>
 * auto_vs_hand_geomean: geometric mean of hand time / auto time over the layers of both
 * networks (> 1: the autoscheduler is faster); auto_within_10pct_of_hand: the share of
 * layers whose auto time is at most 1.1 x the hand time; auto_beats_hand: the share where it
 * is lower; schedule_seconds_vgg19: wall time of `autoschedule --net vgg19` on this machine.
 *
 *   auto_bench
 */
#include "apps/bench/bench_support.h"
#include "apps/net/network.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

const sw_net::NetworkTable &alexnet_table();
const sw_net::NetworkTable &vgg19_table();

namespace {

struct Totals {
    double log_ratio = 0;
    int layers = 0, within = 0, beats = 0;
    double worst_model_error = 0;  ///< |predicted - emulated| / emulated, autoscheduled layers
    std::string worst_model_layer;
};

void run(const sw_net::NetworkTable &table, Totals &t, const std::vector<double> &predicted) {
    sw_net::Network net(table);
    const std::vector<float> x = sw_bench::prepare(net);
    std::vector<sw_net::LayerRecord> hand, base, autos;
    const std::vector<float> yh = net.run(x, "sunway", &hand);
    net.run(x, "baseline", &base);
    const std::vector<float> ya = net.run(x, "auto", &autos);
    double worst = 0;
    for (size_t i = 0; i < yh.size(); i++) worst = std::max(worst, double(std::fabs(yh[i] - ya[i])));
    std::printf("\n== %s, batch 1 (modelled SW26010 ms; auto and hand outputs differ by at most %.2g) ==\n",
                table.name.c_str(), worst);
    std::printf("%-8s %-8s %12s %12s %12s %12s %9s %10s\n", "layer", "kind", "baseline", "hand", "auto", "auto pred",
                "pred err", "hand/auto");
    for (size_t i = 0; i < hand.size(); i++) {
        const double h = hand[i].modelled_seconds, a = autos[i].modelled_seconds, b = base[i].modelled_seconds;
        const double ratio = h / a;
        const double pred = i < predicted.size() ? predicted[i] : -1.0, err = pred / (a * 1e3) - 1;
        std::printf("%-8s %-8s %12.3f %12.3f %12.3f %12.4g %+8.1f%% %10.2f\n", hand[i].name.c_str(),
                    hand[i].kind.c_str(), b * 1e3, h * 1e3, a * 1e3, pred, 100 * err, ratio);
        if (std::fabs(err) > t.worst_model_error) {
            t.worst_model_error = std::fabs(err);
            t.worst_model_layer = table.name + " " + hand[i].name;
        }
        t.log_ratio += std::log(ratio);
        t.layers++;
        t.within += a <= 1.1 * h;
        t.beats += a < h;
    }
}

}  // namespace

int main() {
    Totals t;
    std::vector<double> pred_alexnet, pred_vgg;
    const double s_alexnet = sw_bench::schedule_network(SW_AUTOSCHEDULE_CLI, "alexnet", &pred_alexnet);
    const double s_vgg = sw_bench::schedule_network(SW_AUTOSCHEDULE_CLI, "vgg19", &pred_vgg);
    if (s_alexnet < 0 || s_vgg < 0) {
        std::fprintf(stderr, "error: the autoschedule CLI failed (%s)\n", SW_AUTOSCHEDULE_CLI);
        return 1;
    }
    run(alexnet_table(), t, pred_alexnet);
    run(vgg19_table(), t, pred_vgg);
    std::printf("\nautoscheduler time (autoschedule --net, this machine): alexnet %.2f s, vgg19 %.2f s\n", s_alexnet,
                s_vgg);
    std::printf("cost model vs emulator (autoscheduled layers): worst %.1f%% (%s)\n", 100 * t.worst_model_error,
                t.worst_model_layer.c_str());
    std::printf("RESULT auto_vs_hand_geomean=%.3f auto_within_10pct_of_hand=%.3f auto_beats_hand=%.3f "
                "schedule_seconds_vgg19=%.2f\n",
                std::exp(t.log_ratio / t.layers), double(t.within) / t.layers, double(t.beats) / t.layers, s_vgg);
    return 0;
}
