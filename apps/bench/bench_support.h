/** \file
 * What the benchmarks share: the autoscheduler's predictions for a network and for one layer
 * (the autoschedule CLI). Running a network: network_runs.h.
 */
#ifndef SW_BENCH_SUPPORT_H
#define SW_BENCH_SUPPORT_H

#include "runtime/locate.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sw_bench {

/** The autoschedule CLI, found at run time (runtime/locate.h: <build>/autoscheduler/autoschedule
 * beside this build's benchmarks, or $SW_AUTOSCHEDULE_CLI); exits with the reason if it is not
 * there. */
inline const std::string &autoschedule_cli() {
    static const std::string path = [] {
        try {
            return sw::find_tool(sw::kAutoscheduleCli);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            std::exit(1);
        }
    }();
    return path;
}

/** Runs the autoschedule CLI \p cli on a network (`--net`); returns its wall time in seconds
 * (-1 if it failed) and fills \p predicted with the predicted milliseconds of each layer, in
 * the order of the network table. */
inline double schedule_network(const std::string &cli, const std::string &net,
                               std::vector<double> *predicted,
                               const std::string &machine = "sw26010") {
    const std::string cmd = cli + " --net " + net + " --machine " + machine;
    FILE *p = popen(cmd.c_str(), "r");
    if (!p)
        return -1;
    char line[1024];
    double seconds = -1;
    bool table = false;
    while (std::fgets(line, sizeof line, p)) {
        const std::string l = line;
        if (l.rfind("layer ", 0) == 0) {
            table = true;
            continue;
        }
        if (l.rfind("total:", 0) == 0) {
            const size_t in = l.rfind(" in ");
            if (in != std::string::npos)
                seconds = std::atof(l.c_str() + in + 4);
            table = false;
            continue;
        }
        if (!table)
            continue;
        // layer kind plan... pred_ms GFLOPS LDM DMA sched_s bound_ms roof bound (the columns
        // of apps/autoschedule.cpp's network()): the plan may hold spaces, so pred_ms is found
        // from the end, eight fields back.
        std::vector<std::string> f;
        std::string w;
        for (char c : l) {
            if (c == ' ' || c == '\n') {
                if (!w.empty())
                    f.push_back(w), w.clear();
            } else {
                w += c;
            }
        }
        constexpr size_t kPredFromEnd = 8;
        if (f.size() >= kPredFromEnd + 3)
            predicted->push_back(std::atof(f[f.size() - kPredFromEnd].c_str()));
    }
    if (pclose(p) != 0)
        return -1;
    return seconds;
}

/** One layer scheduled by the autoscheduler and run on the emulator (`autoschedule -g ...
 *  --tune 1`): the cost model's prediction and the emulator's modelled time. */
struct TunedLayer {
    double predicted_ms = -1, emulated_ms = -1;
    double line_bytes = -1; ///< DMA line bytes of all CPEs on the emulator (-1: not reported)
    std::string plan;
};

inline TunedLayer tune_one(const std::string &cli, const std::string &generator_and_params) {
    TunedLayer t;
    const std::string cmd = cli + " -g " + generator_and_params + " --tune 1 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    if (!p)
        return t;
    char line[4096];
    while (std::fgets(line, sizeof line, p)) {
        const std::string l = line;
        // "[tune 1/1] <plan> (predicted X ms) ... emulator Y ms (...)"
        if (l.rfind("[tune 1/1] ", 0) != 0)
            continue;
        const size_t pr = l.find(" (predicted "), em = l.find(" emulator ");
        if (pr == std::string::npos || em == std::string::npos)
            continue;
        t.plan = l.substr(11, pr - 11);
        t.predicted_ms = std::atof(l.c_str() + pr + 12);
        t.emulated_ms = std::atof(l.c_str() + em + 10);
        const size_t lb = l.find("all CPEs: "); // "... all CPEs: N DMA line bytes; ..."
        if (lb != std::string::npos)
            t.line_bytes = std::atof(l.c_str() + lb + 10);
    }
    if (pclose(p) != 0)
        t.emulated_ms = -1;
    return t;
}

} // namespace sw_bench

#endif
