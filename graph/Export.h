/** \file
 * Export: writes a built model (Executor.h) as a self-contained folder for the real machine
 * (sw_net --model FILE.onnx --export DIR):
 *   layers/<fn>.mpe.c .cpe.c .h .sw_args.h  every distinct layer's generated MPE and CPE code
 *   HalideRuntime.h                          the halide_buffer_t declarations the layers take
 *   sw_model.h / sw_model.c                  the model's C API and the host program that runs
 *                                            the graph on the MPE (plain C99)
 *   main.c                                   reads weights.bin and one .npy per model input
 *                                            (float32 or int64), runs, writes the output .npy
 *   weights.bin                              every constant (layout in README.md)
 *   Makefile, README.md                      sw5cc build (make) and emulator build (make emu)
 * The host program allocates the activations once: an arena in which each intermediate
 * tensor gets an offset by liveness (first fit among the tensors alive at the same time, 128
 * byte aligned), views (Flatten, Reshape, an Unsqueeze of a mask) alias their input, and the
 * inputs and weights are read in place. The model may have several inputs, each float32 or
 * int64 (token ids, a mask): sw_model_run_inputs takes them in the model's order, and a layer
 * reads an int64 one through a Halide buffer of type int64, as the executor passes it; int64
 * constants a layer reads (a Gather's indices left unfolded) are in weights.bin, two floats
 * per value. The output is float32. A concat made in place (ConcatInPlace.h) has one buffer in the
 * arena, alive from the first step that writes a slice of it to the last step that reads any tensor
 * in it; its inputs are offsets into it (their producers write there) and the concat itself calls
 * no layer. The layers run in the lowered order, as sw_net runs them.
 */
#ifndef SW_GRAPH_EXPORT_H
#define SW_GRAPH_EXPORT_H

#include "graph/Executor.h"

#include <cstdint>
#include <string>

namespace sw_graph {

struct ExportSummary {
    int layers = 0, steps = 0;
    int64_t weight_floats = 0;
    int64_t arena_bytes = 0;    ///< activations with reuse by liveness
    int64_t unshared_bytes = 0; ///< the same tensors each in its own buffer
};

/** Throws Error if \p dir cannot be an export folder: it exists and is not an empty
 * directory, or its parent is missing or unwritable. Nothing is created. */
void check_export_dir(const std::string &dir);

/** Writes the folder (created; see check_export_dir). \p model_path is named in the files.
 * Throws Error naming the file on a write error. */
ExportSummary export_model(const Executor &ex, const std::string &model_path,
                           const std::string &dir);

} // namespace sw_graph

#endif
