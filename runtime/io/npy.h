/** \file
 * NumPy .npy files of float32 (dtype '<f4', C order), the format PyTorch weights are
 * exported in (`np.save(path, tensor.detach().numpy())`), and of int64 / int32 (token ids and
 * masks of a transformer's inputs).
 */
#ifndef SW_IO_NPY_H
#define SW_IO_NPY_H

#include "io_error.h"
#include "output_file.h"

#include <cstdio>

#include <cstdint>
#include <string>
#include <vector>

namespace sw_io {

struct NpyArray {
    std::vector<int64_t> shape; ///< empty for a 0-d array (one element)
    std::vector<float> data;    ///< C order: last dimension fastest
};

/** What loading does with NaN and infinite values: refuse them (the default: a NaN in a
 * weight file would otherwise run to finite-looking results) or keep them. */
enum class NonFinite { Refuse, Allow };

/** Reads a .npy file of format version 1.0, 2.0 or 3.0 holding '<f4' data in C order.
 * Throws IoError naming the file for a missing file, a bad magic string or version, a
 * malformed header, any other dtype, fortran_order True, or data shorter or longer than
 * the shape says (the shape is checked against the file's size before the data is
 * allocated), and, unless \p nonfinite is Allow, for a NaN or an infinity (naming the
 * first one's index, e.g. "element (0, 3) (flat index 3) is NaN"). */
NpyArray load_npy(const std::string &path, NonFinite nonfinite = NonFinite::Refuse);

/** load_npy, then checks the shape: a different shape throws IoError naming the file,
 * the expected and the actual shape. */
NpyArray load_npy_expect(const std::string &path, const std::vector<int64_t> &expected_shape,
                         NonFinite nonfinite = NonFinite::Refuse);

/** An integer .npy array (token ids, attention masks), widened to int64. */
struct NpyInts {
    std::vector<int64_t> shape;
    std::vector<int64_t> data;
};

/** The dtype string of a .npy file's header ('<f4', '<i8', ...); IoError as load_npy for a
 * missing file or a malformed header. */
std::string npy_dtype(const std::string &path);

/** Reads a .npy file of little-endian int64 ('<i8') or int32 ('<i4', widened) data in C
 * order, with load_npy's checks (shape against the file's size before allocating, no data
 * past the shape, C order). */
NpyInts load_npy_ints(const std::string &path);

/** A .npy file read a slice at a time (a batch streamed image by image, not loaded whole):
 * the constructor reads the header and checks the shape against the file's size exactly as
 * load_npy does (IoError naming the file, before anything is allocated), and refuses data
 * past the shape; read() reads elements [first, first + count) in C order, refusing NaN and
 * infinities unless \p nonfinite is Allow, named by their index in the whole array. */
class NpyReader {
public:
    explicit NpyReader(const std::string &path, NonFinite nonfinite = NonFinite::Refuse);
    ~NpyReader();
    NpyReader(const NpyReader &) = delete;
    NpyReader &operator=(const NpyReader &) = delete;
    const std::vector<int64_t> &shape() const { return shape_; }
    size_t elements() const { return elements_; }
    void read(size_t first, size_t count, float *out);

private:
    std::string path_;
    NonFinite nonfinite_;
    FILE *file_ = nullptr;
    std::vector<int64_t> shape_;
    size_t elements_ = 0;
    long data_start_ = 0;
};

/** A .npy file written a slice at a time (outputs streamed pass by pass): the header of
 * \p shape is written when constructed (through OutputFile: an unwritable path fails at
 * once), write() appends elements, close() throws std::invalid_argument unless exactly the
 * shape's elements were written and IoError if a write failed. */
class NpyWriter {
public:
    NpyWriter(const std::string &path, const std::vector<int64_t> &shape);
    void write(const float *data, size_t count);
    void close();

private:
    OutputFile out_;
    std::vector<int64_t> shape_;
    size_t elements_ = 0, written_ = 0;
};

/** Writes a version 1.0 .npy file ('<f4', C order; version 2.0 only if the header does
 * not fit in 64 KiB) through OutputFile. Throws IoError naming the path if the file cannot
 * be written or a write fails (a full disk), std::invalid_argument
 * if data.size() is not the product of the shape. */
void save_npy(const std::string &path, const std::vector<int64_t> &shape,
              const std::vector<float> &data);

/** "(2, 3)" style text of a shape, as NumPy prints it ("(5,)", "()"). */
std::string shape_to_string(const std::vector<int64_t> &shape);

} // namespace sw_io

#endif
