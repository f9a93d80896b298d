/** \file
 * Network parameters and class names: PyTorch weights exported as .npy files, seeded
 * deterministic weights when there are none, and label lists.
 */
#ifndef SW_IO_WEIGHTS_H
#define SW_IO_WEIGHTS_H

#include "io_error.h"
#include "npy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sw_io {

/** The parameters of a network in a directory, one .npy file per tensor, named after
 * PyTorch's state_dict keys: `<dir>/<layer>.weight.npy` and `<dir>/<layer>.bias.npy`
 * (e.g. layer "features.0"). Layouts are PyTorch's: conv weights OIHW, fully connected
 * weights [out, in], biases [out]. Files are read on request, each checked against the
 * shape the caller expects. */
class WeightStore {
public:
    /** \p nonfinite: whether a NaN or an infinity in a file is refused (IoError naming the
     * layer, the file and the element) or kept. */
    explicit WeightStore(std::string dir, NonFinite nonfinite = NonFinite::Refuse);
    const std::string &dir() const { return dir_; }

    std::string weight_path(const std::string &layer) const;
    std::string bias_path(const std::string &layer) const;
    /** Whether both files of the layer exist. */
    bool has(const std::string &layer) const;

    /** The layer's weights; throws IoError naming the layer and the path if the file is
     * missing, malformed, of another shape or (unless allowed) holds a NaN or an infinity. */
    std::vector<float> weight(const std::string &layer, const std::vector<int64_t> &shape) const;
    /** The layer's bias of out elements; errors as weight(). */
    std::vector<float> bias(const std::string &layer, int64_t out) const;

private:
    std::vector<float> load(const std::string &layer, const std::string &path, const char *what,
                            const std::vector<int64_t> &shape) const;
    std::string dir_;
    NonFinite nonfinite_;
};

/** Seeded weights for running a network without trained parameters, the same on every
 * machine and compiler (std::mt19937_64 seeded from a hash of the layer name and the
 * seed; no implementation-defined distribution). A shape of rank >= 2 is a weight tensor
 * whose first dimension is the outputs: He-style uniform in +-sqrt(6 / fan_in), fan_in the
 * product of the other dimensions, so activations stay bounded through a deep ReLU net. A
 * shape of rank 1 is a bias: uniform in +-0.01. */
std::vector<float> deterministic_weights(const std::string &layer,
                                         const std::vector<int64_t> &shape, uint64_t seed = 0);

/** deterministic_weights(layer, {out}, seed): a small seeded bias. */
std::vector<float> deterministic_bias(const std::string &layer, int64_t out, uint64_t seed = 0);

/** One class name per line ('\r' stripped, a final newline optional). Throws IoError
 * naming the file if it cannot be read. */
std::vector<std::string> load_labels(const std::string &path);

} // namespace sw_io

#endif
