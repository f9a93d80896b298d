/** \file
 * What a run of generated layers records, layer by layer: the shapes, the analytic flops, the
 * emulator's figures (LayerRecord) and the trace spans (TraceSpan). Shared by the built-in
 * networks (network.h), the ONNX executor (graph/Executor.h) and the reports (report.h);
 * library sw_runtime (runtime/CMakeLists.txt).
 */
#ifndef SW_NET_RECORDS_H
#define SW_NET_RECORDS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sw_net {

/** A tensor shape, outermost first: {N, C, H, W} or {N, F}. */
using Shape = std::vector<int64_t>;
std::string shape_string(const Shape &s);
int64_t elements(const Shape &s);

/** Analytic GFLOP of one call of the generator \p kind with these generator params, reading
 * \p in_elements and writing \p out_elements values: 2 per multiply-add (conv2d, dense; a
 * conv2d's prologue 1 more per input value, as channel_affine counts; conv_transpose: each
 * input value's k * k_y * out_channels / groups multiply-adds), the
 * window's area per output (pool), 2 * size + 4 per output (lrn), 4 per input (softmax), 1
 * per input (global_pool), 2 * k per output (batch_matmul), 8 per output (layer_norm), 4 M N D
 * + 5 M N per batch and head (attention: its two products and, per score, the scale or mask,
 * max, exp, sum and divide), 0 for pure data movement (transpose, gather, pad, a
 * nearest resize), 9 per output for a bilinear resize (three interpolations), 1 per output
 * elsewhere. */
double layer_gflop(const std::string &kind, const std::map<std::string, std::string> &params,
                   int64_t in_elements, int64_t out_elements);

/** What one layer did on one run. */
struct LayerRecord {
    std::string name, kind;
    Shape output;
    double gflop = 0;            ///< analytic: 2 per multiply-add; 1 per compare/add elsewhere
    double wall_seconds = 0;     ///< emulator wall time on this machine
    double modelled_seconds = 0; ///< SW26010 time from the emulator's timing model
    /** The same layer if the compiler paired no P0/P1 instructions (the other end of the
     * compute band; the kernels' modelled_unpaired_seconds, athread_emu.h): an upper bound
     * that keeps every DMA wait, >= modelled_seconds. */
    double modelled_unpaired_seconds = 0;
    double counted_gflop = 0; ///< flops the generated code counted (work counters)
    long long ldm_peak_bytes = 0;
    long long dma_requests = 0, dma_bytes = 0, dma_line_bytes = 0;
    long long dma_get_bytes = 0, dma_get_line_bytes = 0; ///< the gets (main memory -> LDM) alone
    /** What the layer must move at least, for its roofline (target_sw/Roofline.h): each of
     * its inputs once (activations, weights, bias, a fused residual) and its output once, 4
     * bytes a value. */
    long long read_bytes = 0, write_bytes = 0;
    /** The roofline terms of one layer of those a fused layer replaces, as it would run
     * alone: its analytic GFLOP, and the bytes it would read and write once. */
    struct Part {
        double gflop = 0;
        long long read_bytes = 0, write_bytes = 0;
    };
    /** A fused layer (a ChannelScaleShift prologue fused into the conv that reads it): the
     * layers it replaces, unfused (the affine writing its output and the conv reading it
     * again). Its per-layer roofline bound is the sum of theirs (layer_roofline, report.h),
     * so that the fusion, which removes that tensor from both sides, shows as a gain; its
     * own bound (gflop, read_bytes, write_bytes) is the report's fused_bound_ms. Empty: a
     * layer of its own. */
    std::vector<Part> unfused;
    int kernels = 0;
    /** Where the modelled time went on each kernel's busiest CPE (the one with the most
     * cycles, which sets the kernel's time), summed over the layer's kernels, in seconds
     * (the emulator's per-CPE records): compute (reported work), DMA wait (blocked on a
     * reply, plus the final drain), sync wait (athread_syn) and register-communication
     * wait. The rest of modelled_seconds is overhead: spawn and join, and the CPE's cycles
     * outside these (e.g. register-communication put/get instructions). */
    double busiest_compute_seconds = 0, busiest_dma_wait_seconds = 0, busiest_sync_wait_seconds = 0,
           busiest_regcomm_wait_seconds = 0;
};

/** A span of modelled time on one CPE, for traces: seconds from the start of the run. */
struct TraceSpan {
    std::string layer;
    int cpe;
    int kind; ///< athread_emu_span_kind
    double start_seconds, end_seconds;
};

} // namespace sw_net

#endif
