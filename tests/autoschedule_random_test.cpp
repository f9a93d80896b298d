/** \file
 * The Sunway autoscheduler on seeded random layer shapes: conv2d (batch, odd channel
 * counts, groups, rectangular kernels, per-axis strides, per-side padding, ReLU), pooling
 * (max / average, padding, ceil mode, count_include_pad), dense (alpha, beta, ReLU), LRN and
 * concat (a copy pipeline, 2-7 inputs).
 * For every shape the layer is generated with the autoscheduler plugin
 *   layers.generator ... -p libsw_autoschedule.so -s Sunway auto_schedule=true target=sw26010 ...
 * compiled and loaded (jit/jit_layer.h), and run on the emulated core group with
 * random inputs and weights against reference/naive_layers.h
 * (|actual - expected| <= 1e-4 + 1e-4 |expected|, as layers_test). A successful build means
 * the schedule fits the LDM (the lowering checks every LDM buffer's constant bound); the
 * emulator checks it again at run time, with every DMA.
 * Determinism: for a few of the shapes the generator runs twice, in two processes, and the
 * generated FUNCTION.cpe.c and FUNCTION.schedule.h (the schedule the autoscheduler chose)
 * must be identical once the function names are made equal.
 *
 * The shapes come from std::mt19937 with fixed seeds (SW_AUTOSCHEDULE_TEST_SEED=<n> adds n
 * to every seed, to explore other shapes). Builds run in parallel (SW_TEST_JOBS threads,
 * default 2-4); every shape then runs in a forked child, so an emulator error (it ends the
 * process) or a hang (killed after 120 s) fails that shape only, and the message names the
 * shape's generator parameters. SW_AUTOSCHEDULE_TEST_HAND=1 uses the hand schedules
 * instead of the plugin, to check the harness itself.
 */
#include "HalideBuffer.h"
#include "jit/jit_layer.h"
#include "reference/naive_layers.h"
#include "tests/support/layer_params.h"

#include <athread_emu.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifndef SW_LAYERS_GENERATOR
#error "SW_LAYERS_GENERATOR (path of layers.generator) must be defined"
#endif
#ifndef SW_AUTOSCHEDULE_PLUGIN
#error "SW_AUTOSCHEDULE_PLUGIN (path of libsw_autoschedule.so) must be defined"
#endif

namespace {

using Buf = Halide::Runtime::Buffer<float>;
using Params = std::map<std::string, std::string>;

bool env_flag(const char *name) {
    const char *v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

int env_int(const char *name, int fallback) {
    const char *v = std::getenv(name);
    return v && *v ? std::atoi(v) : fallback;
}

unsigned seed(unsigned base) {
    return base + unsigned(env_int("SW_AUTOSCHEDULE_TEST_SEED", 0));
}

bool use_hand_schedules() {
    return env_flag("SW_AUTOSCHEDULE_TEST_HAND");
}

/** The generator arguments that select the autoscheduler. */
std::vector<std::string> autoschedule_args() {
    if (use_hand_schedules())
        return {};
    return {"-p", SW_AUTOSCHEDULE_PLUGIN, "-s", "Sunway", "auto_schedule=true"};
}

sw_jit::JitOptions jit_options(const std::string &machine = "sw26010") {
    sw_jit::JitOptions o;
    o.target = machine;
    o.extra_args = autoschedule_args();
    if (!use_hand_schedules())
        o.emit = "mpe,cpe,h,schedule"; // with the predicted time
    return o;
}

int jobs() {
    const int n = env_int("SW_TEST_JOBS", 0);
    if (n > 0)
        return n;
    return std::clamp(int(std::thread::hardware_concurrency()), 2, 4);
}

/** f(0) .. f(n-1) on jobs() threads. */
void parallel_for(int n, const std::function<void(int)> &f) {
    std::atomic<int> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < std::min(jobs(), n); t++) {
        pool.emplace_back([&] {
            for (int i; (i = next++) < n;)
                f(i);
        });
    }
    for (std::thread &t : pool)
        t.join();
}

std::string str(int v) {
    return std::to_string(v);
}
std::string str(bool v) {
    return v ? "true" : "false";
}

// Drawn from std::mt19937's raw output, whose sequence the standard fixes (the
// <random> distributions are implementation-defined): the same shapes everywhere.
/** An integer in [lo, hi] (hi - lo small: the modulo bias is negligible). */
int uniform(std::mt19937 &rng, int lo, int hi) {
    return lo + int(rng() % uint32_t(hi - lo + 1));
}
/** True with probability p. */
bool chance(std::mt19937 &rng, double p) {
    return rng() < p * 4294967296.0;
}
template <typename T> T pick(std::mt19937 &rng, const std::vector<T> &v) {
    return v[uniform(rng, 0, int(v.size()) - 1)];
}

/** n values in [-scale, scale). */
std::vector<float> random_values(size_t n, unsigned s, float scale = 1.f) {
    std::mt19937 rng(s);
    std::vector<float> v(n);
    for (float &x : v)
        x = scale * float(double(rng()) / 2147483648.0 - 1.0);
    return v;
}

/** "" if every element is close, else the first mismatches (with their coordinates in
 *  \p dims, innermost first) and their count. */
std::string compare(const std::vector<float> &expected, const std::vector<float> &actual,
                    const std::vector<int> &dims) {
    if (expected.size() != actual.size()) {
        return "size " + std::to_string(actual.size()) + ", expected " +
               std::to_string(expected.size());
    }
    std::ostringstream msg;
    size_t bad = 0;
    for (size_t i = 0; i < expected.size(); i++) {
        const float e = expected[i], a = actual[i];
        if (std::fabs(e - a) <= 1e-4f + 1e-4f * std::fabs(e))
            continue;
        if (bad++ < 3) {
            msg << "  at (";
            size_t r = i;
            for (size_t d = 0; d < dims.size(); d++) {
                msg << (d ? ", " : "") << r % dims[d];
                r /= dims[d];
            }
            msg << "): expected " << e << ", got " << a << "\n";
        }
    }
    if (!bad)
        return "";
    return std::to_string(bad) + " of " + std::to_string(expected.size()) +
           " elements differ (coordinates innermost first):\n" + msg.str();
}

/** Calls the layer; "" or why it failed. Also checks the emulator's LDM records. */
std::string call_layer(const sw_jit::JitLayer &layer, const std::vector<halide_buffer_t *> &args) {
    // The tensors start on 128-byte DMA lines, as sw_net allocates them (and real athread code
    // aligns its arrays): the cost model assumes so (CostModel.cpp, transfer()).
    std::vector<Buf> lined;
    for (halide_buffer_t *a : args)
        lined.push_back(Buf(*a).copy());
    std::vector<halide_buffer_t *> raw;
    for (Buf &b : lined)
        raw.push_back(b.raw_buffer());
    athread_emu_stats_reset();
    const int rc = layer.call(raw);
    Buf(*args.back()).copy_from(lined.back());
    if (rc != 0)
        return "the layer returned " + std::to_string(rc);
    for (int k = 0; k < athread_emu_stats_count(); k++) {
        const athread_emu_kernel_stats *s = athread_emu_stats_get(k);
        for (int c = 0; c < s->ncpes; c++) {
            if (s->cpe[c].ldm_peak_bytes > s->ldm_budget_bytes) {
                return std::string("kernel ") + s->kernel + ": CPE " + std::to_string(c) +
                       " used " + std::to_string(s->cpe[c].ldm_peak_bytes) +
                       " bytes of LDM, budget " + std::to_string(s->ldm_budget_bytes);
            }
        }
    }
    return "";
}

/** One random layer: its generator, parameters, and a check that runs it (in a child
 *  process) and returns "" or what went wrong. */
struct Case {
    std::string generator;
    Params params;
    std::function<std::string(const sw_jit::JitLayer &)> check;
    /** Why the cost model cannot be compared with the emulator on this shape ("" if it can). */
    std::string model_exempt;
    /** A plan to lower instead of the search's choice (SW_AUTOSCHEDULE_PLAN; "" for none). */
    std::string plan;
    /** The cost model's largest relative miss of the emulator allowed on this case (0: the
     * family's kModelLimit). */
    double model_limit = 0;

    std::string describe() const {
        std::string s = generator;
        for (const auto &p : params)
            s += " " + p.first + "=" + p.second;
        return s;
    }
};

// ------------------------------------------------------------------------- shapes

/** Whether every window along one axis lies in the padding (no output reads an input value:
 *  Halide then proves the reduction adds only zeros and removes it, which the cost model,
 *  working from the algorithm, does not know). */
bool windows_only_in_padding(int size, int out, int kernel, int stride, int pad_before) {
    for (int o = 0; o < out; o++) {
        const int first = o * stride - pad_before, last = first + kernel - 1;
        if (last >= 0 && first < size)
            return false;
    }
    return true;
}

Case conv_case(const reference::Conv2DParams &p, unsigned data_seed, bool residual) {
    Params params = sw_test::conv2d_params(p);
    if (residual)
        params["residual"] = "true";
    const bool padding_only =
        windows_only_in_padding(p.w, p.out_w(), p.kernel_x, p.stride_x, p.pad_left) ||
        windows_only_in_padding(p.h, p.out_h(), p.kernel_y, p.stride_y, p.pad_top);
    return {
        "conv2d", params,
        [p, data_seed, residual](const sw_jit::JitLayer &layer) {
            const int ipg = p.in_c / p.groups;
            std::vector<float> in = random_values(size_t(p.batch) * p.in_c * p.h * p.w, data_seed);
            std::vector<float> wt =
                random_values(size_t(p.out_c) * ipg * p.kernel_x * p.kernel_y, data_seed + 1);
            std::vector<float> b = random_values(p.out_c, data_seed + 2);
            const std::vector<int> od = {p.out_w(), p.out_h(), p.out_c, p.batch};
            std::vector<float> out(size_t(od[0]) * od[1] * od[2] * od[3], NAN);
            Buf bi(in.data(), {p.w, p.h, p.in_c, p.batch});
            Buf bw(wt.data(), {p.kernel_x, p.kernel_y, ipg, p.out_c});
            Buf bb(b.data(), {p.out_c});
            Buf bo(out.data(), od);
            std::vector<float> res = random_values(residual ? out.size() : 0, data_seed + 3);
            Buf br(res.data(), od);
            std::vector<halide_buffer_t *> args = {bi.raw_buffer(), bw.raw_buffer(),
                                                   bb.raw_buffer()};
            if (residual)
                args.push_back(br.raw_buffer());
            args.push_back(bo.raw_buffer());
            std::string e = call_layer(layer, args);
            return e.empty() ? compare(reference::conv2d(p, in, wt, b, residual ? &res : nullptr),
                                       out, od)
                             : e;
        },
        padding_only ? "every window lies in the padding: the lowering removes the reduction" : ""};
}

/** ~120 convolutions: batch 1-3, channels 1-40 (multiples of groups 1-4), kernels 1-5
 *  (a quarter rectangular), strides 1-3 (a fifth different per axis), padding 0-2 (a third
 *  asymmetric, some larger than the kernel), sizes 1-30 with the kernel inside the padded
 *  input, ReLU on or off; every fourth with the fused residual add. */
std::vector<Case> conv_cases(int count) {
    std::mt19937 rng(seed(1001));
    std::vector<Case> cases;
    for (int i = 0; i < count; i++) {
        reference::Conv2DParams p{};
        p.batch = uniform(rng, 1, 3);
        p.groups = chance(rng, 0.6) ? 1 : uniform(rng, 2, 4);
        p.in_c = p.groups * uniform(rng, 1, 40 / p.groups);
        p.out_c = p.groups * uniform(rng, 1, 40 / p.groups);
        p.kernel_x = uniform(rng, 1, 5);
        p.kernel_y = chance(rng, 0.25) ? uniform(rng, 1, 5) : p.kernel_x;
        p.stride_x = uniform(rng, 1, 3);
        p.stride_y = chance(rng, 0.2) ? uniform(rng, 1, 3) : p.stride_x;
        if (chance(rng, 0.3)) {
            p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 0;
        } else if (chance(rng, 0.5)) {
            p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = uniform(rng, 1, 2);
        } else {
            p.pad_left = uniform(rng, 0, 2);
            p.pad_right = uniform(rng, 0, 2);
            p.pad_top = uniform(rng, 0, 2);
            p.pad_bottom = uniform(rng, 0, 2);
        }
        p.h = uniform(rng, std::max(1, p.kernel_y - p.pad_top - p.pad_bottom), 30);
        p.w = uniform(rng, std::max(1, p.kernel_x - p.pad_left - p.pad_right), 30);
        p.relu = chance(rng, 0.5);
        cases.push_back(conv_case(p, seed(50000 + i * 10), i % 4 == 1));
    }
    return cases;
}

/** With \p skip_rows (a subsample: kernel_y 1, stride_y > 1 dividing the height), the
 * generator's skip_rows: the same input memory passed as rows of stride_y * width. */
Case pool_case(const reference::PoolParams &p, unsigned data_seed, bool skip_rows = false) {
    Params params = sw_test::pool_params(p);
    if (skip_rows)
        params["skip_rows"] = "true";
    return {"pool", params, [p, data_seed, skip_rows](const sw_jit::JitLayer &layer) {
                std::vector<float> in =
                    random_values(size_t(p.batch) * p.channels * p.h * p.w, data_seed);
                const std::vector<int> od = {p.out_w(), p.out_h(), p.channels, p.batch};
                std::vector<float> out(size_t(od[0]) * od[1] * od[2] * od[3], NAN);
                const int row_step = skip_rows ? p.stride_y : 1;
                Buf bi(in.data(), {p.w * row_step, p.h / row_step, p.channels, p.batch});
                Buf bo(out.data(), od);
                std::string e = call_layer(layer, {bi.raw_buffer(), bo.raw_buffer()});
                return e.empty() ? compare(reference::pool2d(p, in), out, od) : e;
            }};
}

/** ~40 poolings: max or average, batch 1-3, channels 1-40, kernels 1-4 (a quarter
 *  rectangular), strides 1-3, padding 0-1 per side (smaller than the kernel; a third
 *  asymmetric), ceil mode a third of the time, count_include_pad half of the averages,
 *  sizes 1-30 with the kernel inside the padded input. */
std::vector<Case> pool_cases(int count) {
    std::mt19937 rng(seed(2002));
    std::vector<Case> cases;
    for (int i = 0; i < count; i++) {
        reference::PoolParams p{};
        p.batch = uniform(rng, 1, 3);
        p.channels = uniform(rng, 1, 40);
        p.kernel_x = uniform(rng, 1, 4);
        p.kernel_y = chance(rng, 0.25) ? uniform(rng, 1, 4) : p.kernel_x;
        p.stride_x = uniform(rng, 1, 3);
        p.stride_y = chance(rng, 0.2) ? uniform(rng, 1, 3) : p.stride_x;
        auto pad = [&](int kernel) { return kernel > 1 ? uniform(rng, 0, 1) : 0; };
        if (chance(rng, 0.3)) {
            p.pad_left = pad(p.kernel_x);
            p.pad_right = pad(p.kernel_x);
            p.pad_top = pad(p.kernel_y);
            p.pad_bottom = pad(p.kernel_y);
        } else {
            const int v = uniform(rng, 0, 1);
            p.pad_left = p.pad_right = p.kernel_x > 1 ? v : 0;
            p.pad_top = p.pad_bottom = p.kernel_y > 1 ? v : 0;
        }
        p.ceil_mode = chance(rng, 0.35);
        p.is_max = chance(rng, 0.5);
        p.count_include_pad = !p.is_max && chance(rng, 0.5);
        p.h = uniform(rng, std::max(1, p.kernel_y - p.pad_top - p.pad_bottom), 30);
        p.w = uniform(rng, std::max(1, p.kernel_x - p.pad_left - p.pad_right), 30);
        cases.push_back(pool_case(p, seed(60000 + i * 10)));
    }
    return cases;
}

/** A dense layer with random inputs, weights and bias from seed \p s, against the naive reference;
 * \p in_out: the weights passed as (in, out) rows (weights_layout=in_out). */
Case dense_case(int batch, int in_f, int out_f, bool relu, double alpha, double beta, unsigned s,
                bool in_out = false) {
    Params params = {
        {"batch", str(batch)}, {"in_features", str(in_f)},       {"out_features", str(out_f)},
        {"relu", str(relu)},   {"alpha", std::to_string(alpha)}, {"beta", std::to_string(beta)}};
    if (in_out)
        params["weights_layout"] = "in_out";
    return {
        "dense", params, [=](const sw_jit::JitLayer &layer) {
            std::vector<float> in = random_values(size_t(batch) * in_f, s);
            std::vector<float> wt = random_values(size_t(out_f) * in_f, s + 1);
            std::vector<float> b = random_values(out_f, s + 2);
            std::vector<float> out(size_t(batch) * out_f, NAN);
            std::vector<float> wt_in_out(wt.size());
            for (int o = 0; o < out_f; o++) {
                for (int k = 0; k < in_f; k++)
                    wt_in_out[size_t(k) * out_f + o] = wt[size_t(o) * in_f + k];
            }
            Buf bi(in.data(), {in_f, batch});
            Buf bw = in_out ? Buf(wt_in_out.data(), {out_f, in_f}) : Buf(wt.data(), {in_f, out_f});
            Buf bb(b.data(), {out_f}), bo(out.data(), {out_f, batch});
            std::string e = call_layer(
                layer, {bi.raw_buffer(), bw.raw_buffer(), bb.raw_buffer(), bo.raw_buffer()});
            return e.empty()
                       ? compare(reference::dense(batch, in_f, out_f, in, wt, b, relu, alpha, beta),
                                 out, {out_f, batch})
                       : e;
        }};
}

/** ~40 dense layers: batch 1-5, 1-600 inputs, 1-300 outputs, ReLU on or off, alpha and
 *  beta other than 1 a third of the time. */
std::vector<Case> dense_cases(int count) {
    std::mt19937 rng(seed(3003));
    std::vector<Case> cases;
    for (int i = 0; i < count; i++) {
        const int batch = uniform(rng, 1, 5), in_f = uniform(rng, 1, 600),
                  out_f = uniform(rng, 1, 300);
        const bool relu = chance(rng, 0.5);
        double alpha = 1, beta = 1;
        if (chance(rng, 0.35)) {
            alpha = pick<double>(rng, {0.5, 2, -1.25});
            beta = pick<double>(rng, {0, 0.25, 3});
        }
        cases.push_back(dense_case(batch, in_f, out_f, relu, alpha, beta, seed(70000 + i * 10)));
    }
    return cases;
}

/** ~20 dense layers with their weights as (in, out) rows (a transformer's projections, ONNX
 * MatMul's layout): 1-200 rows (token counts such as 197 that nothing divides), 1-300 inputs
 * and outputs, ReLU on or off. */
std::vector<Case> dense_in_out_cases(int count) {
    std::mt19937 rng(seed(3013));
    std::vector<Case> cases;
    for (int i = 0; i < count; i++) {
        const int batch = uniform(rng, 1, 200), in_f = uniform(rng, 1, 300),
                  out_f = uniform(rng, 1, 300);
        cases.push_back(
            dense_case(batch, in_f, out_f, chance(rng, 0.5), 1, 1, seed(71000 + i * 10), true));
    }
    return cases;
}

/** ~30 LRNs: batch 1-2, channels 1-40, sizes 1-16, window 1-7 (odd), a few alpha, beta, k;
 *  inputs in [-40, 40] so that the normaliser matters. */
std::vector<Case> lrn_cases(int count) {
    std::mt19937 rng(seed(4004));
    std::vector<Case> cases;
    for (int i = 0; i < count; i++) {
        const int batch = uniform(rng, 1, 2), c = uniform(rng, 1, 40);
        const int h = uniform(rng, 1, 16), w = uniform(rng, 1, 16),
                  size = 2 * uniform(rng, 0, 3) + 1;
        const std::string alpha = pick<std::string>(rng, {"0.0001", "0.001", "0.01"});
        const std::string beta = pick<std::string>(rng, {"0.75", "0.5", "1"});
        const std::string k = pick<std::string>(rng, {"1", "2"});
        Params params = {
            {"batch", str(batch)}, {"channels", str(c)}, {"height", str(h)}, {"width", str(w)},
            {"size", str(size)},   {"alpha", alpha},     {"beta", beta},     {"k", k}};
        const unsigned s = seed(80000 + i * 10);
        cases.push_back(
            {"lrn", params, [=](const sw_jit::JitLayer &layer) {
                 std::vector<float> in = random_values(size_t(batch) * c * h * w, s, 40.f);
                 std::vector<float> out(in.size(), NAN);
                 Buf bi(in.data(), {w, h, c, batch}), bo(out.data(), {w, h, c, batch});
                 std::string e = call_layer(layer, {bi.raw_buffer(), bo.raw_buffer()});
                 return e.empty()
                            ? compare(reference::lrn(batch, c, h, w, in, size, std::stod(alpha),
                                                     std::stod(beta), std::stod(k)),
                                      out, {w, h, c, batch})
                            : e;
             }});
    }
    return cases;
}

// -------------------------------------------------------------------------- running

/** Runs \p body in a forked child (output to a pipe, 120 s alarm); "" if it returned "",
 *  else its message, or how the child ended and what it printed. Call it with no other
 *  thread of this process running. */
std::string run_isolated(const std::function<std::string()> &body, std::string *output = nullptr) {
    int fds[2];
    if (pipe(fds) != 0)
        return std::string("pipe: ") + std::strerror(errno);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return std::string("fork: ") + std::strerror(errno);
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[1]);
        alarm(120);
        const std::string msg = body();
        std::fflush(nullptr);
        for (size_t at = 0; at < msg.size();) {
            const ssize_t n = write(2, msg.data() + at, msg.size() - at);
            if (n <= 0)
                break;
            at += size_t(n);
        }
        _exit(msg.empty() ? 0 : 1);
    }
    close(fds[1]);
    std::string out;
    const int status = sw_jit::collect_child(fds[0], pid, &out);
    if (status < 0)
        return std::string("waitpid: ") + std::strerror(errno) + ":\n" + out;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (output)
            *output = out;
        return "";
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
        return out;
    if (WIFSIGNALED(status)) {
        return "the run was killed by signal " + std::to_string(WTERMSIG(status)) +
               (WTERMSIG(status) == SIGALRM ? " (timeout, 120 s)" : "") + ":\n" + out;
    }
    return "the run ended with status " + std::to_string(WEXITSTATUS(status)) + ":\n" + out;
}

/** The target: the autoscheduler's cost model within 15% of the emulator's timing model on
 *  every plan it emits (relative to the emulator). Where it is not met the test says so for
 *  each plan; it fails when more than kModelMissShare of a kind's plans miss it, or when any
 *  plan misses kModelLimit (the cost model's line-byte estimate of small, unaligned windows
 *  is the known source of the few misses: see docs/autoscheduler.md, "Cost model vs emulator"). */
constexpr double kModelTolerance = 0.15, kModelLimit = 0.20, kModelMissShare = 0.02;

std::string read_text(const std::string &path);

/** The schedule header (FUNCTION.schedule.h) of a built layer: the schedule the autoscheduler
 *  chose, as source. */
std::string schedule_text(const sw_jit::JitBuild &b) {
    return read_text(b.layer->dir() + "/" + b.layer->function_name() + ".schedule.h");
}

/** Builds every case (in parallel), then runs each in a child process; one failure per
 *  failing shape, naming it. With the autoscheduler, each plan's predicted time must be
 *  within kModelTolerance of the time the emulator's timing model gives the same code. */
std::vector<sw_jit::JitBuild> run_cases(const std::string &kind, const std::vector<Case> &cases,
                                        const std::string &machine = "sw26010") {
    const auto start = std::chrono::steady_clock::now();
    std::vector<sw_jit::JitBuild> builds(cases.size());
    parallel_for(int(cases.size()), [&](int i) {
        sw_jit::JitOptions o = jit_options(machine);
        if (!cases[i].plan.empty())
            o.env["SW_AUTOSCHEDULE_PLAN"] = cases[i].plan;
        builds[i] =
            sw_jit::jit_build_layer(SW_LAYERS_GENERATOR, cases[i].generator, cases[i].params, o);
    });
    const auto built = std::chrono::steady_clock::now();
    int build_failures = 0, run_failures = 0, model_failures = 0, compared = 0, exempt = 0,
        worst = -1;
    double worst_error = 0;
    for (size_t i = 0; i < cases.size(); i++) {
        const Case &c = cases[i];
        if (!builds[i].ok()) {
            build_failures++;
            ADD_FAILURE() << kind << " shape #" << i << " did not build: " << c.describe() << "\n"
                          << builds[i].log;
            continue;
        }
        const sw_jit::JitLayer &layer = *builds[i].layer;
        std::string output;
        const std::string err = run_isolated(
            [&] {
                std::string e = c.check(layer);
                double modelled = 0;
                for (int k = 0; k < athread_emu_stats_count(); k++)
                    modelled += athread_emu_stats_get(k)->modelled_seconds;
                if (e.empty())
                    std::printf("EMULATED_SECONDS=%.9g\n", modelled);
                return e;
            },
            &output);
        if (!err.empty()) {
            run_failures++;
            ADD_FAILURE() << kind << " shape #" << i << " failed on the emulator: " << c.describe()
                          << "\n"
                          << err;
            continue;
        }
        const double predicted = sw_jit::read_layer_schedule(layer).predicted_seconds;
        const size_t at = output.find("EMULATED_SECONDS=");
        if (predicted <= 0 || at == std::string::npos)
            continue;
        if (!c.model_exempt.empty()) {
            exempt++;
            std::printf("note: %s shape #%zu not compared with the cost model (%s): %s\n",
                        kind.c_str(), i, c.model_exempt.c_str(), c.describe().c_str());
            continue;
        }
        const double emulated = std::atof(output.c_str() + at + 17);
        const double error = std::fabs(predicted - emulated) / emulated;
        compared++;
        if (error > worst_error)
            worst_error = error, worst = int(i);
        if (error > kModelTolerance) {
            model_failures++;
            std::printf("note: %s shape #%zu: the cost model predicted %.4g ms, the emulator's "
                        "timing model gives "
                        "%.4g ms (%.1f%% off, more than %.0f%%): %s\n",
                        kind.c_str(), i, predicted * 1e3, emulated * 1e3, 100 * error,
                        100 * kModelTolerance, c.describe().c_str());
        }
        EXPECT_LE(error, c.model_limit > 0 ? c.model_limit : kModelLimit)
            << kind << " shape #" << i << ": the cost model predicted " << predicted * 1e3
            << " ms, the emulator's timing model gives " << emulated * 1e3
            << " ms: " << c.describe();
    }
    const auto done = std::chrono::steady_clock::now();
    auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
    std::printf("[ %s ] %zu shapes (%s): %d did not build, %d failed on the emulator; build %.1f "
                "s, run %.1f s\n",
                kind.c_str(), cases.size(),
                use_hand_schedules() ? "hand schedules" : "autoscheduler", build_failures,
                run_failures, secs(start, built), secs(built, done));
    if (compared) {
        std::printf(
            "[ %s ] cost model vs emulator on %d plans: worst %.1f%% (shape #%d), %d beyond %.0f%% "
            "(%d shapes not compared)\n",
            kind.c_str(), compared, 100 * worst_error, worst, model_failures, 100 * kModelTolerance,
            exempt);
        EXPECT_LE(model_failures, kModelMissShare * compared)
            << kind << ": " << model_failures << " of " << compared << " plans beyond "
            << 100 * kModelTolerance << "%";
    }
    return builds;
}

/** A concat (a copy pipeline, planned per update: autoscheduler/CopyUpdates.h). */
Case concat_case(int batch, int h, int w, const std::vector<int> &channels, unsigned data_seed) {
    std::string list;
    for (int c : channels)
        list += (list.empty() ? "" : ",") + std::to_string(c);
    const Params params = {{"batch", std::to_string(batch)},
                           {"height", std::to_string(h)},
                           {"width", std::to_string(w)},
                           {"channels", list},
                           {"input.size", std::to_string(channels.size())}};
    return {"concat", params, [=](const sw_jit::JitLayer &layer) {
                std::vector<std::vector<float>> in;
                std::vector<Buf> bufs;
                std::vector<halide_buffer_t *> args;
                int total = 0;
                for (size_t k = 0; k < channels.size(); k++) {
                    in.push_back(random_values(size_t(batch) * channels[k] * h * w,
                                               data_seed + unsigned(k)));
                    total += channels[k];
                }
                for (size_t k = 0; k < channels.size(); k++) {
                    bufs.emplace_back(in[k].data(), std::vector<int>{w, h, channels[k], batch});
                }
                const std::vector<int> od = {w, h, total, batch};
                std::vector<float> out(size_t(w) * h * total * batch, NAN);
                bufs.emplace_back(out.data(), od);
                for (Buf &b : bufs)
                    args.push_back(b.raw_buffer());
                std::string e = call_layer(layer, args);
                return e.empty() ? compare(reference::concat(batch, h, w, channels, in), out, od)
                                 : e;
            }};
}

/** ~20 concats: batch 1-3, 2-7 inputs of 1-40 channels, sizes 1-30. */
std::vector<Case> concat_cases(int count) {
    std::mt19937 rng(seed(5005));
    std::vector<Case> cases;
    for (int i = 0; i < count; i++) {
        const int batch = uniform(rng, 1, 3), h = uniform(rng, 1, 30), w = uniform(rng, 1, 30);
        std::vector<int> channels(size_t(uniform(rng, 2, 7)));
        for (int &c : channels)
            c = uniform(rng, 1, 40);
        cases.push_back(concat_case(batch, h, w, channels, seed(95000 + unsigned(i) * 10)));
    }
    return cases;
}

constexpr int kConvCount = 120, kPoolCount = 40, kDenseCount = 40, kDenseInOutCount = 20,
              kLrnCount = 30, kConcatCount = 20;

TEST(AutoscheduleRandom, Conv2D) {
    run_cases("conv2d", conv_cases(kConvCount));
}
TEST(AutoscheduleRandom, Pool) {
    run_cases("pool", pool_cases(kPoolCount));
}
/** SW26010-Pro (floatv8, 224 KB of LDM, CRTS DMA): the same checks on a share of the shapes,
 *  the cost model within the same tolerance of the Pro's timing model. */
TEST(AutoscheduleRandom, Conv2DPro) {
    run_cases("conv2d (sw26010-pro)", conv_cases(kConvCount / 3), "sw26010-pro");
}
/** The Pro's mesh plans (RMA sharing) that model_bench found beyond 15%: SqueezeNet's squeeze
 *  conv (512 -> 64 on 13x13: 104 blocks, a last round of five mesh rows whose sources alone
 *  fetch; +18% when every round was priced with eight) and ResNet-18's layer2.0/conv2 with its
 *  residual add (28-wide rows padded to 32 in the LDM: the residual's rows one request each,
 *  issued at the top of the tile before DeferTileGets followed a mesh source's prefetch; -16%).
 *  Each a mesh plan, against the naive reference and within 15% of the emulator (run_cases:
 *  with two plans, none may miss). */
TEST(AutoscheduleRandom, ProMeshPlansWithAPartialRoundOrAResidual) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    std::vector<Case> cases = {
        conv_case(reference::Conv2DParams::square(1, 512, 64, 13, 13, 1, 1, 0, true), seed(99800),
                  false),
        conv_case(reference::Conv2DParams::square(1, 128, 128, 28, 28, 3, 1, 1, true), seed(99801),
                  true)};
    const std::vector<sw_jit::JitBuild> builds =
        run_cases("mesh plans (sw26010-pro)", cases, "sw26010-pro");
    for (size_t i = 0; i < builds.size(); i++) {
        ASSERT_TRUE(builds[i].ok()) << cases[i].describe();
        const std::string plan = sw_jit::read_layer_schedule(*builds[i].layer).plan;
        EXPECT_NE(plan.find("over the mesh columns, inputs shared"), std::string::npos)
            << cases[i].describe() << ": expected a mesh plan, the plan is\n"
            << plan;
    }
}
TEST(AutoscheduleRandom, PoolAndDensePro) {
    run_cases("pool (sw26010-pro)", pool_cases(kPoolCount / 2), "sw26010-pro");
    run_cases("dense (sw26010-pro)", dense_cases(kDenseCount / 2), "sw26010-pro");
}
TEST(AutoscheduleRandom, Dense) {
    run_cases("dense", dense_cases(kDenseCount));
}
TEST(AutoscheduleRandom, DenseWeightsInOut) {
    run_cases("dense (weights in, out)", dense_in_out_cases(kDenseInOutCount));
}
TEST(AutoscheduleRandom, Lrn) {
    run_cases("lrn", lrn_cases(kLrnCount));
}
TEST(AutoscheduleRandom, Concat) {
    run_cases("concat", concat_cases(kConcatCount));
}

/** Dense layers whose input every CPE needs whole (the batch in one tile): the autoscheduler
 * shares it (sw::broadcast, by broadcast DMA or register communication), which must still
 * match the reference, including a batch and feature counts that do not divide the vectors. */
TEST(AutoscheduleRandom, DenseSharedInput) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    std::vector<Case> cases;
    const int shapes[][3] = {{16, 1024, 256}, {7, 1500, 192}, {1, 1000, 640}};
    for (const auto &sh : shapes) {
        cases.push_back(dense_case(sh[0], sh[1], sh[2], true, 1, 1, seed(90000 + unsigned(sh[1]))));
    }
    const std::vector<sw_jit::JitBuild> builds = run_cases("dense (shared input)", cases);
    int shared = 0;
    for (const sw_jit::JitBuild &b : builds) {
        if (!b.ok())
            continue;
        const std::string schedule = schedule_text(b);
        shared += schedule.find("::sw::broadcast(") != std::string::npos;
    }
    EXPECT_EQ(shared, int(builds.size()))
        << "the autoscheduler shared the input of only " << shared << " of " << builds.size()
        << " dense layers whose input every CPE reads whole";
}

/** Register blocks the search takes beside 1, 2 or 4 vectors x a power of two of channels:
 * a block as wide as a narrow tile row (27 -> 7 vectors, 13 -> 4, 11 -> 3), lines that are
 * any divisor of the channel tile (6), and, in a grouped convolution, only lines whose
 * aligned runs stay in one group (4 channels per group: 2 or 4 lines). The whole 13x13 and
 * 11x11 maps in one tile, their rows padded to whole vectors in the LDM and compacted before
 * one put (InjectDma), beat the 3-line blocks of tiles of 3 channels that were picked before
 * that (0.086 -> 0.046 ms and 0.073 -> 0.039 ms on the emulator). Each plan as the autoscheduler
 * names it, against the naive reference and the cost model as every shape here (batch 2 and odd
 * channel counts among them). */
TEST(AutoscheduleRandom, ConvRegisterBlocksOfNarrowRowsAndChannelTiles) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    struct Shape {
        int batch, in_c, out_c, size, kernel, groups;
        const char *block; ///< the plan's register block, as Plan::describe() writes it
    };
    const Shape shapes[] = {
        {1, 8, 64, 27, 5, 2, "floatv4 x7 x 2 register block"},
        {1, 12, 192, 13, 3, 2, "floatv4 x4 x 4 register block"},
        // (40 input channels: with 16, a reduction short enough for tiles in turn, those win
        // since their puts go into two slots: 0.105 against 0.113 ms on the emulator.)
        {1, 40, 384, 13, 3, 1, "floatv4 x2 x 6 register block"},
        {2, 6, 96, 11, 3, 1, "floatv4 x3 x 4 register block"},
        {1, 12, 48, 20, 3, 3, "floatv4 x2 x 4 register block"},
        {1, 12, 24, 11, 3, 6, "floatv4 x3 x 2 register block"},
    };
    std::vector<Case> cases;
    for (const Shape &sh : shapes) {
        reference::Conv2DParams p = reference::Conv2DParams::square(
            sh.batch, sh.in_c, sh.out_c, sh.size, sh.size, sh.kernel, 1, sh.kernel / 2, true);
        p.groups = sh.groups;
        cases.push_back(conv_case(p, seed(97000 + unsigned(sh.out_c * 10 + sh.groups)), false));
    }
    const std::vector<sw_jit::JitBuild> builds = run_cases("conv2d (register blocks)", cases);
    for (size_t i = 0; i < builds.size(); i++) {
        if (!builds[i].ok())
            continue;
        const std::string plan = sw_jit::read_layer_schedule(*builds[i].layer).plan;
        ASSERT_FALSE(plan.empty()) << cases[i].describe() << ": no schedule header";
        EXPECT_NE(plan.find(shapes[i].block), std::string::npos)
            << cases[i].describe() << ": expected a " << shapes[i].block << ", the plan is\n"
            << plan;
    }
}

// Depthwise convolutions and pools on narrow maps (MobileNetV2's and GoogLeNet's 14x14 and
// 7x7 layers, and shapes that do not divide the vectors or the tiles: 13x13, 15x15, odd
// channel counts, batch 2): vectorised, their LDM rows rounded up to whole vectors and
// compacted in the LDM before one put per tile (InjectDma); the depthwise taps as loops so
// that the accumulators stay in registers. Subsamples that stage only the rows they read.
// Each plan against the naive reference and the cost model (run_cases); each but the
// subsamples' (one point per window: nothing to vectorise) must be a floatv4 plan.
TEST(AutoscheduleRandom, DepthwiseAndPoolsOnNarrowMaps) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    struct Conv {
        int batch, channels, size, stride;
    };
    const Conv convs[] = {{1, 96, 14, 1}, {2, 37, 7, 1}, {1, 45, 13, 1}, {1, 24, 15, 2}};
    std::vector<Case> cases;
    for (const Conv &sh : convs) {
        reference::Conv2DParams p = reference::Conv2DParams::square(
            sh.batch, sh.channels, sh.channels, sh.size, sh.size, 3, sh.stride, 1, true);
        p.groups = sh.channels;
        cases.push_back(conv_case(p, seed(99000 + unsigned(sh.channels * 10 + sh.size)), false));
    }
    struct Pool {
        int batch, channels, size, kernel, stride, pad;
        bool is_max;
    };
    const Pool pools[] = {
        {1, 64, 14, 3, 1, 1, true}, {2, 13, 7, 3, 1, 1, true}, {1, 30, 13, 3, 1, 1, false}};
    for (const Pool &sh : pools) {
        reference::PoolParams p{sh.batch,  sh.channels, sh.size,   sh.size,   sh.kernel,
                                sh.kernel, sh.stride,   sh.stride, sh.pad,    sh.pad,
                                sh.pad,    sh.pad,      false,     sh.is_max, false};
        cases.push_back(pool_case(p, seed(99500 + unsigned(sh.channels * 10 + sh.size))));
    }
    // Subsamples (a strided pointwise conv's input, graph/Lowering.cpp) staging only the rows
    // they read (skip_rows): ResNet's 56 -> 28, odd channels and batch 2, a stride of 3.
    struct Subsample {
        int batch, channels, height, width, stride;
    };
    const Subsample subsamples[] = {{1, 64, 56, 56, 2}, {2, 13, 14, 9, 2}, {1, 7, 12, 10, 3}};
    for (const Subsample &sh : subsamples) {
        reference::PoolParams p{sh.batch, sh.channels, sh.height, sh.width, 1,
                                1,        sh.stride,   sh.stride, 0,        0,
                                0,        0,           false,     true,     false};
        cases.push_back(pool_case(p, seed(99700 + unsigned(sh.channels * 10 + sh.width)), true));
    }
    const std::vector<sw_jit::JitBuild> builds = run_cases("depthwise and pools", cases);
    for (size_t i = 0; i < builds.size(); i++) {
        ASSERT_TRUE(builds[i].ok()) << cases[i].describe();
        const std::string plan = sw_jit::read_layer_schedule(*builds[i].layer).plan;
        ASSERT_FALSE(plan.empty()) << cases[i].describe() << ": no schedule header";
        if (cases[i].params.count("skip_rows"))
            continue;
        EXPECT_NE(plan.find("floatv4"), std::string::npos)
            << cases[i].describe() << ": expected a vectorised plan, the plan is\n"
            << plan;
    }
}

/** A plan the search ranks but does not choose, forced: pixel tiles of whole 30-pixel rows and
 *  one output channel (each tile's put one block of 15 rows), two tiles in turn per CPE, the
 *  put in pieces over the next tile's chunks. Its pieces were issued with the row pitch minus
 *  the block as stride (-1680 bytes; the emulator refused it, a real CPE's DMA would have
 *  written elsewhere). Against the naive reference; the cost model is not compared: it
 *  predicts 0.084 ms where the emulator gives 0.154 (cause not found yet; the search ranks the
 *  plan below its choice, 0.074 ms predicted, 0.079 emulated). */
TEST(AutoscheduleRandom, AForcedPlanWithAOneBlockPutInPieces) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    Case c = conv_case(reference::Conv2DParams::square(1, 58, 58, 28, 28, 1, 1, 1, true),
                       seed(99850), false);
    c.plan = "tile 30x15x1x1, chunk 2, floatv4 x8 register block, double-buffered, shared input "
             "by broadcast DMA, pixel tiles in turn on each CPE";
    c.model_exempt = "a forced plan the search does not choose";
    const std::vector<sw_jit::JitBuild> builds = run_cases("forced plan", {c});
    ASSERT_EQ(builds.size(), 1u);
    ASSERT_TRUE(builds[0].ok()) << c.describe();
    const std::string plan = sw_jit::read_layer_schedule(*builds[0].layer).plan;
    EXPECT_NE(plan.find(c.plan), std::string::npos) << "the plan lowered:\n" << plan;
}

/** Checks that \p build (of \p c) built and that its plan, as Plan::describe() writes it, has
 * \p feature. */
void expect_plan_has(const sw_jit::JitBuild &build, const Case &c, const std::string &feature) {
    ASSERT_TRUE(build.ok()) << c.describe();
    const std::string plan = sw_jit::read_layer_schedule(*build.layer).plan;
    EXPECT_NE(plan.find(feature), std::string::npos)
        << c.describe() << ": expected " << feature << "; the plan is\n"
        << plan;
}

/** Runs \p cases, each forced to its plan (run_cases: the naive reference and the cost model
 * within its limit), and checks that each built and lowered the plan it was forced to. */
void run_forced_plans(const std::string &label, const std::vector<Case> &cases) {
    const std::vector<sw_jit::JitBuild> builds = run_cases(label, cases);
    ASSERT_EQ(builds.size(), cases.size());
    for (size_t i = 0; i < builds.size(); i++) {
        ASSERT_TRUE(builds[i].ok()) << cases[i].describe();
        const std::string plan = sw_jit::read_layer_schedule(*builds[i].layer).plan;
        EXPECT_NE(plan.find(cases[i].plan), std::string::npos) << "the plan lowered:\n" << plan;
    }
}

// MobileNetV2's 24 -> 144 expansion on 56x56 (a row of 3136 pixels), forced to the plan the
// search chose before the cost model replayed the CPEs in step: three tiles of 128 pixels x 24
// channels per CPE, each put 24 blocks of 512 bytes whose setups every CPE does at the same
// moments, the channel idle meanwhile. With a ReLU: predicted 0.215 ms while the emulator
// gives 0.235 (8.5% off) before that replay, 0.238 with it.
TEST(AutoscheduleRandom, TilesInTurnWithPutsSetUpInStep) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    const reference::Conv2DParams p{1, 24, 144, 1, 3136, 1, 1, 1, 1, 0, 0, 0, 0, 1, true};
    Case c = conv_case(p, seed(99920), false);
    c.plan = "tile 128x1x24x1, floatv4 x1 x 12 register block, 3 tiles in turn on each CPE, "
             "prefetched";
    c.model_limit = 0.05;
    run_forced_plans("tiles in turn, in step", {c});
}

// A broadcast chunk shares the channel with every CPE's own chunk gets, issued at the same
// moment. GoogLeNet's inception5b 832 -> 48 on 7x7 (a row of 49 pixels), its input chunks
// broadcast as rows of 196 bytes: predicted 0.040 ms against 0.047 emulated (15.9% off) while
// the model gave the broadcast the whole channel, 0.047 since it shares the channel.
// ShuffleNetV2's 58 -> 58 on 28x28, pixel tiles in turn with the puts in pieces: predicted
// 0.058 against 0.050 (16% off) while the model put each piece before the next chunk's wait;
// 0.050 since the round is replayed in the generated order (the next chunk waits only for its
// own transfers, each broadcast for the previous one, and shares the channel with the CPEs'
// pieces once their setups are done).
TEST(AutoscheduleRandom, BroadcastChunksShareTheChannel) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    std::vector<Case> cases;
    const reference::Conv2DParams wide{1, 832, 48, 1, 49, 1, 1, 1, 1, 0, 0, 0, 0, 1, true};
    cases.push_back(conv_case(wide, seed(99930), false));
    cases.back().plan = "tile 49x1x1x1, chunk 52, floatv4 x4 register block, double-buffered, "
                        "shared input by broadcast DMA";
    cases.back().model_limit = 0.05;
    const reference::Conv2DParams pixels{1, 58, 58, 1, 784, 1, 1, 1, 1, 0, 0, 0, 0, 1, true};
    cases.push_back(conv_case(pixels, seed(99931), false));
    cases.back().plan = "tile 196x1x1x1, chunk 29, floatv4 x7 register block, double-buffered, "
                        "shared input by broadcast DMA, pixel tiles in turn on each CPE";
    cases.back().model_limit = 0.05;
    run_forced_plans("broadcast chunks", cases);
}

// A CPE's blocks in turn (PipelineRoundPuts: the blocks a multiple of 64), each block's put in
// pieces over the next block's chunks from a second slot. ResNet-50's stem reduced to a
// 112x112 input (7x7 stride 2, 3 -> 64, on the mesh in 2 rounds, its put a loop of 8 channel
// planes) and a dense layer's rfactor plan on the mesh in 4 rounds (128 rows, 128 -> 1024, the
// weights broadcast to each mesh row, its final tile allocated after the reduction). Each
// against the naive reference and within 5% of the emulator.
TEST(AutoscheduleRandom, BlocksInTurnPutInPieces) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    std::vector<Case> cases;
    const reference::Conv2DParams stem =
        reference::Conv2DParams::square(1, 3, 64, 112, 112, 7, 2, 3, true);
    cases.push_back(conv_case(stem, seed(99940), false));
    cases.back().plan = "tile 56x7x4x1, chunk 1, floatv4 x2 x 4 register block, double-buffered, "
                        "window split into phases, dimension 2 over the mesh columns, inputs "
                        "shared along mesh rows / columns";
    cases.back().model_limit = 0.05;
    cases.push_back(dense_case(128, 128, 1024, false, 1, 1, seed(99941)));
    cases.back().plan = "tile 64x8, chunk 64, floatv4 on the reduction (rfactor), 4 x 4 register "
                        "block, double-buffered, dimension 1 over the mesh columns, inputs shared "
                        "along mesh rows / columns (to each row by broadcast DMA)";
    cases.back().model_limit = 0.05;
    run_forced_plans("blocks in turn", cases);
}

// Tiles in turn on each CPE, the next tile's window prefetched while the current one is
// computed and put back (Plan::serial_tiles: the stagings double buffered at the tile loop):
// MobileNetV2's 56x56 depthwise conv, ResNet's stride-2 max pool, ShuffleNetV2's stem, and
// shapes that do not divide the vectors or the tiles (42x42 with 37 channels and batch 2). Each
// plan against the
// naive reference and the cost model (run_cases), and each must be such a plan.
TEST(AutoscheduleRandom, TilesInTurnPrefetched) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    std::vector<Case> cases;
    const int convs[][3] = {{1, 144, 56}, {2, 37, 42}}; // batch, channels, size
    for (const auto &sh : convs) {
        reference::Conv2DParams p =
            reference::Conv2DParams::square(sh[0], sh[1], sh[1], sh[2], sh[2], 3, 1, 1, true);
        p.groups = sh[1];
        cases.push_back(conv_case(p, seed(99800 + unsigned(sh[1] + sh[2])), false));
    }
    reference::PoolParams pool{1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, false, true, false};
    cases.push_back(pool_case(pool, seed(99900)));
    // ShuffleNetV2's stem (3 -> 24, stride 2, 224x224): two tiles in turn whose last put's
    // 24 block setups overlap the previous put's data (predicted 16% above the emulator while
    // the model left the channel idle for all of them after the last compute).
    cases.push_back(conv_case(reference::Conv2DParams::square(1, 3, 24, 224, 224, 3, 2, 1, true),
                              seed(99910), false));
    const std::vector<sw_jit::JitBuild> builds = run_cases("tiles in turn", cases);
    for (size_t i = 0; i < builds.size(); i++) {
        ASSERT_TRUE(builds[i].ok()) << cases[i].describe();
        const std::string plan = sw_jit::read_layer_schedule(*builds[i].layer).plan;
        ASSERT_FALSE(plan.empty()) << cases[i].describe() << ": no schedule header";
        EXPECT_NE(plan.find("tiles in turn on each CPE, prefetched"), std::string::npos)
            << cases[i].describe() << ": expected tiles in turn, prefetched; the plan is\n"
            << plan;
    }
}

// Pointwise convs as the graph gives them (a map as one row of H*W pixels): a 7x7 map's row
// of 49 pixels is not whole vectors, so its input is read through the zero extension, and
// the plan keeps all 49 pixels on each CPE with a slice of the output channels, the input
// chunk broadcast (weight-stationary); on a long row each CPE runs its pixel tiles in turn
// and the CPEs share the chunk of the same pixels. Each plan is run on the emulator against
// the naive reference and the cost model (run_cases).
TEST(AutoscheduleRandom, PointwiseConvsSharedAcrossTheMesh) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    struct Shape {
        int in_c, out_c, pixels;
        bool residual;
        const char *feature; ///< as Plan::describe() writes it
    };
    const Shape shapes[] = {
        {128, 256, 49, false, "shared input by broadcast DMA"},
        {96, 160, 49, true, "shared input by broadcast DMA"},
        {16, 256, 2048, false, "pixel tiles in turn on each CPE"},
    };
    std::vector<Case> cases;
    for (const Shape &sh : shapes) {
        const reference::Conv2DParams p =
            reference::Conv2DParams::square(1, sh.in_c, sh.out_c, 1, sh.pixels, 1, 1, 0, true);
        cases.push_back(conv_case(p, seed(98000 + unsigned(sh.out_c + sh.pixels)), sh.residual));
    }
    const std::vector<sw_jit::JitBuild> builds = run_cases("conv2d (pointwise)", cases);
    for (size_t i = 0; i < builds.size(); i++) {
        ASSERT_TRUE(builds[i].ok()) << cases[i].describe();
        const std::string plan = sw_jit::read_layer_schedule(*builds[i].layer).plan;
        ASSERT_FALSE(plan.empty()) << cases[i].describe() << ": no schedule header";
        EXPECT_NE(plan.find(shapes[i].feature), std::string::npos)
            << cases[i].describe() << ": expected " << shapes[i].feature << ", the plan is\n"
            << plan;
    }
}

// Pointwise convs whose CPEs run their pixel tiles in turn keep their weights in the LDM over
// the pixel tiles (stationary_input: staged once per block at the output channels' block loop,
// the whole reduction), instead of fetching them again for every pixel tile. ResNet-50's 128 ->
// 512 expansion on 28x28 with its residual: 6.03 -> 4.46 MB of DMA lines, 0.288 -> 0.258 ms on
// the emulator. Their bias too: its get no longer waits behind the previous tile's puts at every
// tile's start (that layer 0.258 -> 0.253 ms). Autoscheduled at that shape (with a residual),
// and forced at 40 -> 136 channels on 1000 pixels (5 tiles of 200, 34 blocks of 4 channels);
// a 3x3 16 -> 130 on 14x14 (2 pixel tiles, 65 blocks of 2 channels: the last round one block)
// keeps both per chunk / per tile. Each against the naive reference and the cost model
// (run_cases); the pointwise schedules must stage the weights and the bias at the block loop.
TEST(AutoscheduleRandom, WeightsStationaryOverPixelTilesInTurn) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    std::vector<Case> cases;
    cases.push_back(conv_case(reference::Conv2DParams::square(1, 128, 512, 1, 784, 1, 1, 0, true),
                              seed(99980), true));
    const std::vector<sw_jit::JitBuild> searched = run_cases("weights stationary", cases);
    std::vector<Case> forced;
    forced.push_back(conv_case(reference::Conv2DParams::square(1, 40, 136, 1, 1000, 1, 1, 0, true),
                               seed(99981), false));
    forced.back().plan = "tile 200x1x4x1, chunk 8, floatv4 x5 x 2 register block, double-buffered, "
                         "shared input by broadcast DMA, pixel tiles in turn on each CPE";
    forced.push_back(conv_case(reference::Conv2DParams::square(1, 16, 130, 14, 14, 3, 1, 1, true),
                               seed(99982), false));
    forced.back().plan = "tile 14x7x2x1, chunk 8, floatv4 x4 x 2 register block, taps unrolled, "
                         "double-buffered, shared input by broadcast DMA, pixel tiles in turn on "
                         "each CPE";
    const std::vector<sw_jit::JitBuild> forced_builds = run_cases("stationary, forced", forced);
    ASSERT_EQ(searched.size(), 1u);
    ASSERT_EQ(forced_builds.size(), forced.size());
    expect_plan_has(searched[0], cases[0], "pixel tiles in turn on each CPE");
    const std::string text = schedule_text(searched[0]);
    EXPECT_NE(text.find("weights_im.in().compute_at(output, c_o)"), std::string::npos)
        << "expected the weights staged at the block loop:\n"
        << text;
    EXPECT_NE(text.find("bias_im.in().compute_at(output, c_o)"), std::string::npos)
        << "expected the bias staged at the block loop:\n"
        << text;
    // Stationary only without taps: the 3x3 fetches its weights per chunk and its bias per tile.
    for (size_t i = 0; i < forced.size(); i++) {
        expect_plan_has(forced_builds[i], forced[i], forced[i].plan);
        const std::string forced_text = schedule_text(forced_builds[i]);
        const bool pointwise = i == 0;
        for (const char *input : {"weights_im", "bias_im"}) {
            const std::string at_block = std::string(input) + ".in().compute_at(output, c_o)";
            EXPECT_EQ(forced_text.find(at_block) != std::string::npos, pointwise)
                << forced[i].describe() << ": " << input << "\n"
                << forced_text;
        }
    }
}

// Small maps over the mesh (Plan::Share::Mesh): the output channels over the 8 mesh columns,
// the pixel tiles (and images) over the rows, the window passed along each row and the weights
// down each column by register communication (DenseNet-121's 3x3 convs to 32 channels on
// 14x14 and 7x7 maps: 0.116 -> 0.076 ms and 0.060 -> 0.045 ms on the emulator); channel tiles
// of 3, 5 and 7 (24, 40 and 56 channels), batches of 2 and 3 among the rows, a stride of 2
// with its window split into phases. Each plan against the naive reference and the cost
// model (run_cases); each must be a mesh plan.
TEST(AutoscheduleRandom, SmallMapsOnTheMesh) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    struct Shape {
        int batch, in_c, out_c, size, stride;
    };
    const Shape shapes[] = {
        {1, 128, 32, 14, 1}, {2, 64, 24, 7, 1}, {1, 96, 40, 10, 1}, {3, 40, 56, 6, 2}};
    std::vector<Case> cases;
    for (const Shape &sh : shapes) {
        const reference::Conv2DParams p = reference::Conv2DParams::square(
            sh.batch, sh.in_c, sh.out_c, sh.size, sh.size, 3, sh.stride, 1, true);
        cases.push_back(conv_case(p, seed(99500 + unsigned(sh.out_c + sh.size)), false));
    }
    const std::vector<sw_jit::JitBuild> builds = run_cases("small maps on the mesh", cases);
    for (size_t i = 0; i < builds.size(); i++) {
        ASSERT_TRUE(builds[i].ok()) << cases[i].describe();
        const std::string plan = sw_jit::read_layer_schedule(*builds[i].layer).plan;
        ASSERT_FALSE(plan.empty()) << cases[i].describe() << ": no schedule header";
        EXPECT_NE(plan.find("over the mesh columns, inputs shared"), std::string::npos)
            << cases[i].describe() << ": expected a mesh plan, the plan is\n"
            << plan;
    }
}

// 3x3 convolutions over 16 channels (SqueezeNet's expand3x3: 16 -> 64 on 55x55) have their
// channels chunked too (PipelineInfo::chunk_rvar), so that a chunk's window is double
// buffered behind the previous chunk's compute (0.228 -> 0.175 ms on the emulator, with 8 row
// tiles of 7 of the 55 rows: tile_sizes). Autoscheduled, each against the naive reference and
// the cost model (run_cases); the 16-channel one must be chunked. With 13 channels (fewer than
// 16: not chunked), batch 2.
TEST(AutoscheduleRandom, FewChannelWindowsChunked) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    std::vector<Case> cases;
    cases.push_back(conv_case(reference::Conv2DParams::square(1, 16, 64, 55, 55, 3, 1, 1, true),
                              seed(99970), false));
    cases.push_back(conv_case(reference::Conv2DParams::square(2, 13, 24, 27, 27, 3, 1, 1, true),
                              seed(99971), false));
    const std::vector<sw_jit::JitBuild> builds = run_cases("few-channel windows", cases);
    ASSERT_EQ(builds.size(), cases.size());
    ASSERT_TRUE(builds[1].ok()) << cases[1].describe();
    expect_plan_has(builds[0], cases[0], ", chunk ");
}

// Zero-padded windows passed along the mesh rows with their rows placed by DMA (Plan::
// place_rows, sw::place_rows): the row's fetching CPE sets up a request per window row straight
// to its padded place, and no CPE spreads a compact box after the sharing. Forced on shapes
// that do not divide the vectors (28 and 56 columns in floatv4 x 7), odd channel counts, batch
// 2, a stride of 2 with the window split into phases; each against the naive reference and
// the cost model (run_forced_plans). Then ResNet's 64 -> 64 3x3 on 56x56, autoscheduled, must
// choose such a plan (0.470 -> 0.436 ms on the emulator).
TEST(AutoscheduleRandom, WindowRowsPlacedOnTheMesh) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    std::vector<Case> cases;
    cases.push_back(conv_case(reference::Conv2DParams::square(2, 21, 16, 28, 28, 3, 1, 1, true),
                              seed(99960), false));
    cases.back().plan = "tile 28x7x2x1, chunk 7, floatv4 x7 x 2 register block, taps unrolled, "
                        "double-buffered, dimension 2 over the mesh columns, inputs shared along "
                        "mesh rows / columns, window rows placed by DMA";
    cases.push_back(conv_case(reference::Conv2DParams::square(1, 24, 16, 56, 56, 3, 2, 1, true),
                              seed(99961), false));
    cases.back().plan = "tile 28x4x2x1, chunk 4, floatv4 x7 x 2 register block, taps unrolled, "
                        "double-buffered, window split into phases, dimension 2 over the mesh "
                        "columns, inputs shared along mesh rows / columns, window rows placed by "
                        "DMA";
    run_forced_plans("window rows placed", cases);

    const std::vector<Case> resnet{conv_case(
        reference::Conv2DParams::square(1, 64, 64, 56, 56, 3, 1, 1, true), seed(99962), false)};
    const std::vector<sw_jit::JitBuild> builds = run_cases("window rows placed, searched", resnet);
    ASSERT_EQ(builds.size(), 1u);
    expect_plan_has(builds[0], resnet[0], "window rows placed by DMA");
}

// Zero-padded windows read by unit-stride vectors keep their LDM rows whole vectors
// (aligned_window, Func::align_storage): the taps at multiples of the lanes then load aligned
// vectors (one P1 instruction instead of two). ResNet-50's 128 -> 128 3x3 on 28x28: rows of 30,
// now 32, 0.441 -> 0.401 ms on the emulator. Forced where the rows round up (a 28-wide tile's
// 30, a 27-wide map's 29) with broadcast pixel tiles in turn, every CPE fetching its own window,
// and the mesh with window rows placed by DMA (batch 2, odd channel counts); not on a 7x7 map
// (rows of 9 would pass 12 between the CPEs) nor with a stride of 2 (gathered vectors). Each
// against the naive reference and the cost model (run_forced_plans).
TEST(AutoscheduleRandom, WindowRowsAlignedToVectors) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    struct Shape {
        reference::Conv2DParams p;
        const char *plan;
        bool aligned;
    };
    const Shape shapes[] = {
        {reference::Conv2DParams::square(1, 16, 130, 28, 28, 3, 1, 1, true),
         "tile 28x14x2x1, chunk 8, floatv4 x7 x 2 register block, taps unrolled, double-buffered, "
         "shared input by broadcast DMA, pixel tiles in turn on each CPE",
         true},
        {reference::Conv2DParams::square(1, 64, 24, 28, 28, 3, 1, 1, true),
         "tile 28x7x2x1, chunk 8, floatv4 x7 x 2 register block, taps unrolled, double-buffered",
         true},
        {reference::Conv2DParams::square(2, 16, 24, 27, 27, 3, 1, 1, true),
         "tile 27x9x3x1, chunk 2, floatv4 x4 x 3 register block, taps unrolled, double-buffered, "
         "dimension 2 over the mesh columns, inputs shared along mesh rows / columns, window rows "
         "placed by DMA",
         true},
        {reference::Conv2DParams::square(1, 8, 16, 7, 7, 3, 1, 1, true),
         "tile 7x4x1x1, floatv4 x2 register block", false},
        {reference::Conv2DParams::square(1, 24, 16, 56, 56, 3, 2, 1, true),
         "tile 28x4x2x1, chunk 4, floatv4 x7 x 2 register block, taps unrolled, double-buffered, "
         "window split into phases, dimension 2 over the mesh columns, inputs shared along mesh "
         "rows / columns, window rows placed by DMA",
         false},
    };
    std::vector<Case> cases;
    for (size_t i = 0; i < std::size(shapes); i++) {
        cases.push_back(conv_case(shapes[i].p, seed(99990 + unsigned(i)), false));
        cases.back().plan = shapes[i].plan;
    }
    const std::vector<sw_jit::JitBuild> builds = run_cases("window rows aligned", cases);
    ASSERT_EQ(builds.size(), cases.size());
    for (size_t i = 0; i < builds.size(); i++) {
        expect_plan_has(builds[i], cases[i], cases[i].plan);
        if (!builds[i].ok())
            continue;
        const std::string text = schedule_text(builds[i]);
        EXPECT_EQ(text.find("padded.align_storage(x, 4)") != std::string::npos, shapes[i].aligned)
            << cases[i].describe() << ":\n"
            << text;
    }
}

// Dense layers on the mesh with their weights broadcast to each mesh row by DMA (Plan::
// mesh_row_dma, sw::Sharing::DmaRow): the rows of the output over the 8 mesh columns, its
// columns down the mesh rows, so the weights' chunk of a mesh row is the same on its 8 CPEs and
// crosses the channel once (BCAST_MODE with the row's mask, issued in pieces by the row's
// CPEs); the input's chunk passed down the columns or fetched by each CPE. BERT's 768 -> 768
// projection at 128 tokens: 0.343 -> 0.283 ms on the emulator. 64 and 128 rows (8 row tiles),
// 1536 and 1024 outputs (before: several rounds of mesh columns, now beaten by this plan), and
// 37 rows (8 tiles of 5, the last one shifted inwards: MergeBlockPartitions merges Halide's
// partition of the block loop) with weights as (in, out); each against the naive reference
// and the cost model (run_cases).
TEST(AutoscheduleRandom, DenseWeightsToEachMeshRowByDma) {
    if (use_hand_schedules())
        GTEST_SKIP() << "autoscheduler only";
    std::vector<Case> cases = {dense_case(64, 256, 1536, true, 1, 1, seed(99700)),
                               dense_case(128, 128, 1024, false, 1, 1, seed(99701)),
                               dense_case(37, 200, 768, false, 1, 1, seed(99702), true)};
    const std::vector<sw_jit::JitBuild> builds = run_cases("weights to each mesh row", cases);
    for (size_t i = 0; i < builds.size(); i++) {
        ASSERT_TRUE(builds[i].ok()) << cases[i].describe();
        const std::string plan = sw_jit::read_layer_schedule(*builds[i].layer).plan;
        EXPECT_NE(plan.find("dimension 1 over the mesh columns"), std::string::npos)
            << cases[i].describe() << ": expected the rows over the mesh columns:\n"
            << plan;
        EXPECT_NE(plan.find("(to each row by broadcast DMA)"), std::string::npos)
            << cases[i].describe() << ": expected the weights by DMA to each row:\n"
            << plan;
        const std::string text = schedule_text(builds[i]);
        EXPECT_NE(text.find("::sw::Sharing::DmaRow"), std::string::npos)
            << cases[i].describe() << ":\n"
            << text.substr(0, 1600);
    }
}

// ---------------------------------------------------------------------- determinism

std::string read_text(const std::string &path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

bool exists(const std::string &path) {
    return std::filesystem::exists(path);
}

std::string replace_all(std::string s, const std::string &from, const std::string &to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
        s.replace(at, from.size(), to);
    }
    return s;
}

/** The first line where \p a and \p b differ, for messages. */
std::string first_difference(const std::string &a, const std::string &b) {
    std::istringstream sa(a), sb(b);
    std::string la, lb;
    for (int line = 1;; line++) {
        const bool ga = bool(std::getline(sa, la)), gb = bool(std::getline(sb, lb));
        if (!ga && !gb)
            return "(no difference)";
        if (!ga || !gb || la != lb) {
            return "line " + std::to_string(line) + ":\n  first:  " + (ga ? la : "<end>") +
                   "\n  second: " + (gb ? lb : "<end>");
        }
    }
}

/** Two generator runs of \p c, each in its own process and directory, with different
 *  function names; "" if FUNCTION.cpe.c and (when emitted) FUNCTION.schedule.h agree once
 *  the names are replaced. \p emit is the -e list. */
std::string check_deterministic(const Case &c, int index, const std::string &emit,
                                const std::string &root) {
    std::string text[2][2]; // [run][cpe, schedule]
    bool have_schedule[2] = {false, false};
    for (int run = 0; run < 2; run++) {
        const std::string fn = "det_" + std::to_string(index) + (run ? "_second" : "_first");
        const std::string dir = root + "/" + std::to_string(index) + "_" + std::to_string(run);
        std::filesystem::create_directories(dir);
        std::vector<std::string> argv = {
            SW_LAYERS_GENERATOR, "-g", c.generator, "-f", fn, "-o", dir, "-e", emit};
        for (const std::string &a : autoschedule_args())
            argv.push_back(a);
        argv.push_back("target=sw26010");
        for (const auto &p : c.params)
            argv.push_back(p.first + "=" + p.second);
        std::string out;
        const int rc = sw_jit::run_command(argv, &out);
        if (rc != 0)
            return "run " + std::to_string(run + 1) + " of the generator failed (status " +
                   std::to_string(rc) + "):\n" + out;
        // The name as it is, and upper-cased (the include guard of the schedule header).
        std::string upper = fn;
        for (char &ch : upper)
            ch = char(std::toupper((unsigned char)ch));
        auto normalise = [&](const std::string &t) {
            return replace_all(replace_all(t, fn, "FUNCTION"), upper, "FUNCTION");
        };
        text[run][0] = normalise(read_text(dir + "/" + fn + ".cpe.c"));
        have_schedule[run] = exists(dir + "/" + fn + ".schedule.h");
        if (have_schedule[run])
            text[run][1] = normalise(read_text(dir + "/" + fn + ".schedule.h"));
    }
    if (text[0][0].empty())
        return "the generator wrote no FUNCTION.cpe.c";
    if (emit.find("schedule") != std::string::npos && !have_schedule[0] && !have_schedule[1]) {
        return "the generator wrote no FUNCTION.schedule.h";
    }
    if (text[0][0] != text[1][0])
        return "the .cpe.c differ, at " + first_difference(text[0][0], text[1][0]);
    if (have_schedule[0] != have_schedule[1])
        return "only one run wrote FUNCTION.schedule.h";
    if (have_schedule[0] && text[0][1] != text[1][1]) {
        return "the .schedule.h differ, at " + first_difference(text[0][1], text[1][1]);
    }
    return "";
}

/** Whether this driver knows `-e schedule` (FUNCTION.schedule.h). */
bool driver_emits_schedule(const std::string &root) {
    const std::string dir = root + "/probe";
    std::filesystem::create_directories(dir);
    std::string out;
    sw_jit::run_command({SW_LAYERS_GENERATOR, "-g", "relu", "-f", "probe", "-o", dir, "-e",
                         "schedule", "target=sw26010", "size=8"},
                        &out);
    return out.find("unknown output 'schedule'") == std::string::npos;
}

TEST(AutoscheduleRandom, DeterministicForAGivenInput) {
    // A few shapes of each kind from the lists above.
    std::vector<Case> cases;
    const std::vector<Case> conv = conv_cases(4), pool = pool_cases(2), dense = dense_cases(2),
                            lrn = lrn_cases(2);
    for (const auto *list : {&conv, &pool, &dense, &lrn})
        cases.insert(cases.end(), list->begin(), list->end());

    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/sw_autoschedule_det_XXXXXX";
    std::vector<char> t(pattern.begin(), pattern.end());
    t.push_back(0);
    ASSERT_NE(mkdtemp(t.data()), nullptr) << "cannot create " << pattern;
    const std::string root = t.data();

    // -e schedule needs auto_schedule=true (there is no schedule to write otherwise).
    const bool with_schedule = !use_hand_schedules() && driver_emits_schedule(root);
    if (!with_schedule && !use_hand_schedules()) {
        std::printf("note: this generator driver has no '-e schedule' yet: comparing "
                    "FUNCTION.cpe.c only\n");
    }
    const std::string emit = with_schedule ? "cpe,schedule" : "cpe";
    std::vector<std::string> errors(cases.size());
    parallel_for(int(cases.size()),
                 [&](int i) { errors[i] = check_deterministic(cases[i], i, emit, root); });
    for (size_t i = 0; i < cases.size(); i++) {
        EXPECT_TRUE(errors[i].empty()) << "not deterministic: " << cases[i].describe() << "\n"
                                       << errors[i];
    }
    if (!env_flag("SW_JIT_KEEP")) {
        std::error_code ec;
        std::filesystem::remove_all(root, ec);
    } else {
        std::printf("kept %s\n", root.c_str());
    }
}

} // namespace
