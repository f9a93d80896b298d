/** \file
 * Running a table of generated layers on the emulated core group.
 */
#include "runtime/net/network.h"

#include "runtime/net/emulator_record.h"

#include "HalideBuffer.h"

#include <athread_emu.h>

#include "target_sw/Machine.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <stdexcept>

namespace sw_net {

namespace {

using Fn2 = int (*)(halide_buffer_t *, halide_buffer_t *);
using Fn4 = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);
using Buf = Halide::Runtime::Buffer<float>;

std::map<std::string, std::string> parse_params(const std::string &text) {
    std::map<std::string, std::string> m;
    std::istringstream s(text);
    for (std::string kv; s >> kv;) {
        const size_t eq = kv.find('=');
        if (eq != std::string::npos) m[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return m;
}

/** A Halide view (x fastest) of an NCHW or NF tensor. */
Buf view(const Tensor &data, const Shape &s) {
    std::vector<int> dims(s.rbegin(), s.rend());
    return Buf(const_cast<float *>(data.data()), dims);
}

int pool_out(int size, int k, int s, int p0, int p1, bool ceil_mode) {
    const int span = size + p0 + p1 - k;
    int n = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (n - 1) * s >= size + p0) n--;
    return n;
}

}  // namespace

std::string Network::param(size_t i, const std::string &key, const std::string &fallback) const {
    auto it = params_[i].find(key);
    return it == params_[i].end() ? fallback : it->second;
}

int Network::iparam(size_t i, const std::string &key, int fallback) const {
    const std::string v = param(i, key);
    return v.empty() ? fallback : std::stoi(v);
}

Network::Network(const NetworkTable &table) : table_(table) {
    for (const LayerEntry &l : table_.layers) params_.push_back(parse_params(l.params));
    for (size_t i = 0; i < size(); i++) {
        const std::string &kind = table_.layers[i].kind;
        const int n = iparam(i, "batch", 1);
        Shape in, out;
        if (kind == "conv2d" || kind == "pool" || kind == "lrn") {
            const int c = iparam(i, kind == "conv2d" ? "in_channels" : "channels", 1);
            const int h = iparam(i, "height", 1), w = iparam(i, "width", 1);
            in = {n, c, h, w};
            const int k = iparam(i, "kernel", 1), ky = iparam(i, "kernel_y", 0) ? iparam(i, "kernel_y", 0) : k;
            const int st = iparam(i, "stride", 1), sy = iparam(i, "stride_y", 0) ? iparam(i, "stride_y", 0) : st;
            const int p = iparam(i, "pad", 0);
            auto side = [&](const char *key) { return iparam(i, key, -1) < 0 ? p : iparam(i, key, -1); };
            if (kind == "conv2d") {
                out = {n, iparam(i, "out_channels", 1), (h + side("pad_top") + side("pad_bottom") - ky) / sy + 1,
                       (w + side("pad_left") + side("pad_right") - k) / st + 1};
            } else if (kind == "pool") {
                const bool ceil_mode = param(i, "ceil_mode") == "true";
                out = {n, c, pool_out(h, ky, sy, side("pad_top"), side("pad_bottom"), ceil_mode),
                       pool_out(w, k, st, side("pad_left"), side("pad_right"), ceil_mode)};
            } else {
                out = in;
            }
        } else if (kind == "dense") {
            in = {n, iparam(i, "in_features", 1)};
            out = {n, iparam(i, "out_features", 1)};
        } else if (kind == "softmax") {
            in = out = {n, iparam(i, "classes", 1)};
        } else if (kind == "relu") {
            in = out = {iparam(i, "size", 1)};
        } else {
            throw std::runtime_error("network " + table_.name + ": unknown layer kind " + kind);
        }
        if (i == 0) {
            input_shape_ = in;
        } else if (elements(in) != elements(shapes_.back())) {
            throw std::runtime_error("network " + table_.name + ": layer " + table_.layers[i].name +
                                     " takes " + shape_string(in) + " but gets " + shape_string(shapes_.back()));
        }
        shapes_.push_back(out);
    }
    weights_.resize(size());
    biases_.resize(size());
}

Shape Network::weight_shape(size_t i) const {
    const std::string &kind = table_.layers[i].kind;
    if (kind == "conv2d") {
        const int k = iparam(i, "kernel", 1), ky = iparam(i, "kernel_y", 0) ? iparam(i, "kernel_y", 0) : k;
        const int groups = iparam(i, "groups", 1);
        return {iparam(i, "out_channels", 1), iparam(i, "in_channels", 1) / groups, ky, k};
    }
    if (kind == "dense") return {iparam(i, "out_features", 1), iparam(i, "in_features", 1)};
    return {};
}

Shape Network::bias_shape(size_t i) const {
    const Shape w = weight_shape(i);
    return w.empty() ? Shape{} : Shape{w[0]};
}

void Network::load_parameters(const ParamSource &source) {
    for (size_t i = 0; i < size(); i++) {
        const Shape w = weight_shape(i);
        if (w.empty()) continue;
        const std::vector<float> wv = source(table_.layers[i].name, "weight", w);
        const std::vector<float> bv = source(table_.layers[i].name, "bias", bias_shape(i));
        weights_[i].assign(wv.begin(), wv.end());
        biases_[i].assign(bv.begin(), bv.end());
        if (int64_t(weights_[i].size()) != elements(w) || int64_t(biases_[i].size()) != w[0]) {
            throw std::runtime_error("layer " + table_.layers[i].name + ": parameters of the wrong size");
        }
    }
}

double Network::layer_gflop(size_t i, const Shape &in) const {
    return sw_net::layer_gflop(table_.layers[i].kind, params_[i], elements(in), elements(shapes_[i]));
}

std::vector<float> Network::run(const std::vector<float> &input, const std::string &schedule,
                                std::vector<LayerRecord> *records, std::vector<TraceSpan> *trace,
                                const DenseHook *dense) const {
    auto sched = std::find(table_.schedules.begin(), table_.schedules.end(), schedule);
    if (sched == table_.schedules.end()) {
        throw std::runtime_error("network " + table_.name + " has no schedule '" + schedule + "'");
    }
    const size_t s = size_t(sched - table_.schedules.begin());
    if (int64_t(input.size()) != elements(input_shape_)) {
        throw std::runtime_error("network " + table_.name + " takes " + shape_string(input_shape_) +
                                 " (" + std::to_string(elements(input_shape_)) + " values), got " +
                                 std::to_string(input.size()));
    }
    Tensor current(input.begin(), input.end());
    double clock = 0;  // modelled seconds since the start of the run
    athread_emu_set_trace(trace ? 1 : 0);
    for (size_t i = 0; i < size(); i++) {
        const LayerEntry &l = table_.layers[i];
        const Shape in_shape = i == 0 ? input_shape_ : shapes_[i - 1];
        // Our layers know their input's own shape: NCHW for conv/pool/lrn, N x F for dense
        // and softmax (flattened per image), flat for relu.
        Shape layer_in;
        if (l.kind == "dense" || l.kind == "softmax") {
            layer_in = {in_shape[0], elements(in_shape) / in_shape[0]};
        } else if (l.kind == "relu") {
            layer_in = {elements(in_shape)};
        } else {
            layer_in = in_shape;
        }
        Tensor out(size_t(elements(shapes_[i])));
        Buf bin = view(current, layer_in), bout = view(out, shapes_[i]);
        athread_emu_stats_reset();
        athread_emu_trace_reset();
        const auto t0 = std::chrono::steady_clock::now();
        int rc;
        if (dense && *dense && l.kind == "dense") {
            rc = (*dense)(i, bin.raw_buffer(), bout.raw_buffer());
        } else if (l.kind == "conv2d" || l.kind == "dense") {
            if (weights_[i].empty()) throw std::runtime_error("layer " + l.name + " has no parameters loaded");
            const Shape w = weight_shape(i);
            Buf bw = view(weights_[i], w), bb = view(biases_[i], bias_shape(i));
            rc = reinterpret_cast<Fn4>(l.functions[s].p)(bin.raw_buffer(), bw.raw_buffer(), bb.raw_buffer(),
                                                         bout.raw_buffer());
        } else {
            rc = reinterpret_cast<Fn2>(l.functions[s].p)(bin.raw_buffer(), bout.raw_buffer());
        }
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (rc != 0) throw std::runtime_error("layer " + l.name + " failed (" + std::to_string(rc) + ")");
        LayerRecord r{l.name, l.kind, shapes_[i], layer_gflop(i, in_shape), secs};
        add_emulator_records(r, clock, trace);
        clock += r.modelled_seconds;
        if (records) records->push_back(r);
        current = std::move(out);
    }
    return std::vector<float>(current.begin(), current.end());
}

}  // namespace sw_net
