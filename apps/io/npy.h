/** \file
 * NumPy .npy files of float32 (dtype '<f4', C order), the format PyTorch weights are
 * exported in (`np.save(path, tensor.detach().numpy())`).
 */
#ifndef SW_IO_NPY_H
#define SW_IO_NPY_H

#include "io_error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sw_io {

struct NpyArray {
    std::vector<int64_t> shape;  ///< empty for a 0-d array (one element)
    std::vector<float> data;     ///< C order: last dimension fastest
};

/** Reads a .npy file of format version 1.0, 2.0 or 3.0 holding '<f4' data in C order.
 * Throws IoError naming the file for a missing file, a bad magic string or version, a
 * malformed header, any other dtype, fortran_order True, or data shorter or longer than
 * the shape says. */
NpyArray load_npy(const std::string &path);

/** load_npy, then checks the shape: a different shape throws IoError naming the file,
 * the expected and the actual shape. */
NpyArray load_npy_expect(const std::string &path, const std::vector<int64_t> &expected_shape);

/** Writes a version 1.0 .npy file ('<f4', C order; version 2.0 only if the header does
 * not fit in 64 KiB). Throws IoError if the file cannot be written, std::invalid_argument
 * if data.size() is not the product of the shape. */
void save_npy(const std::string &path, const std::vector<int64_t> &shape, const std::vector<float> &data);

/** "(2, 3)" style text of a shape, as NumPy prints it ("(5,)", "()"). */
std::string shape_to_string(const std::vector<int64_t> &shape);

}  // namespace sw_io

#endif
