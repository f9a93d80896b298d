/** \file
 * A network as a sequence of generated Sunway layers, and a runner that executes it on the
 * emulated core group layer by layer, recording per layer what the emulator measured.
 *
 * The layer table of a network comes from CMake (cmake/SunwayNetworks.cmake): for each layer
 * its name, generator, generator parameters and one generated function per schedule. Layer
 * outputs are NCHW float32; a dense layer reads its input flattened per image. What a run
 * records (LayerRecord, TraceSpan) is in records.h, shared with the ONNX executor (graph/).
 */
#ifndef SW_NET_NETWORK_H
#define SW_NET_NETWORK_H

#include "runtime/net/aligned.h"
#include "runtime/net/records.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

struct halide_buffer_t;

namespace sw_net {

/** Any generated layer function, stored without its signature (cast back by layer kind). */
struct AnyFn {
    template<typename F>
    AnyFn(F *f) : p(reinterpret_cast<void (*)()>(f)) {}
    void (*p)();
};

struct LayerEntry {
    std::string name, kind, params;
    std::vector<AnyFn> functions;  ///< one per schedule of the table
};

struct NetworkTable {
    std::string name;
    std::vector<std::string> schedules;
    std::vector<LayerEntry> layers;
};

using Tensor = std::vector<float, LineAlignedAllocator<float>>;

/** Supplies a layer's parameters in PyTorch layout (conv OIHW, dense [out, in]). */
using ParamSource = std::function<std::vector<float>(const std::string &layer, const std::string &what,
                                                     const Shape &shape)>;

class Network {
public:
    explicit Network(const NetworkTable &table);

    const std::string &name() const { return table_.name; }
    const std::vector<std::string> &schedules() const { return table_.schedules; }
    /** The shape the first layer takes, including the batch it was compiled for. */
    Shape input_shape() const { return input_shape_; }
    Shape output_shape() const { return shapes_.back(); }
    size_t size() const { return table_.layers.size(); }
    const LayerEntry &layer(size_t i) const { return table_.layers[i]; }
    const Shape &output_shape(size_t i) const { return shapes_[i]; }
    /** Generator parameter of layer i (as written in the table). */
    std::string param(size_t i, const std::string &key, const std::string &fallback = "") const;
    /** All generator parameters of layer i. */
    const std::map<std::string, std::string> &params(size_t i) const { return params_.at(i); }
    /** Weight and bias shapes of layer i (empty for layers without parameters). */
    Shape weight_shape(size_t i) const;
    Shape bias_shape(size_t i) const;

    /** Loads every layer's parameters from \p source. */
    void load_parameters(const ParamSource &source);

    /** Runs dense layer i in place of its generated function (e.g. split over several core
     * groups, dist/): given the layer's input (N x F) and output (N x O) buffers, returns the
     * function's status. Its emulator kernels are recorded as the layer's. */
    using DenseHook = std::function<int(size_t i, halide_buffer_t *in, halide_buffer_t *out)>;

    /** Runs the network on \p input (input_shape() elements) with \p schedule; returns the
     * last layer's output and fills \p records, one per layer. Throws std::runtime_error if
     * a generated function reports an error. \p dense, if given, runs the dense layers. */
    std::vector<float> run(const std::vector<float> &input, const std::string &schedule,
                           std::vector<LayerRecord> *records, std::vector<TraceSpan> *trace = nullptr,
                           const DenseHook *dense = nullptr) const;

    /** Layer i's loaded weights and bias (empty for layers without parameters). */
    const Tensor &weights(size_t i) const { return weights_.at(i); }
    const Tensor &bias(size_t i) const { return biases_.at(i); }

private:
    NetworkTable table_;
    std::vector<std::map<std::string, std::string>> params_;
    std::vector<Shape> shapes_;
    Shape input_shape_;
    std::vector<Tensor> weights_, biases_;

    int iparam(size_t i, const std::string &key, int fallback) const;
    double layer_gflop(size_t i, const Shape &in) const;
};

}  // namespace sw_net

#endif
