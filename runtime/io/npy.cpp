#include "npy.h"

#include "output_file.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <sys/stat.h>

namespace sw_io {

namespace {

const char kMagic[] = "\x93NUMPY"; // 6 bytes, then major and minor version bytes

struct FileCloser {
    void operator()(FILE *f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

[[noreturn]] void fail(const std::string &path, const std::string &what) {
    throw IoError("npy file '" + path + "': " + what);
}

size_t skip_space(const std::string &s, size_t i) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        i++;
    return i;
}

/** Position of the value of key in the header's dict literal ('key' or "key", then ':'). */
size_t find_value(const std::string &path, const std::string &header, const std::string &key) {
    for (const char q : {'\'', '"'}) {
        const size_t at = header.find(q + key + q);
        if (at == std::string::npos)
            continue;
        const size_t colon = skip_space(header, at + key.size() + 2);
        if (colon < header.size() && header[colon] == ':')
            return skip_space(header, colon + 1);
    }
    fail(path, "header has no '" + key + "' entry: " + header);
}

std::string parse_descr(const std::string &path, const std::string &header) {
    const size_t at = find_value(path, header, "descr");
    const char q = at < header.size() ? header[at] : 0;
    const size_t end = (q == '\'' || q == '"') ? header.find(q, at + 1) : std::string::npos;
    if (end == std::string::npos)
        fail(path, "header's 'descr' is not a string: " + header);
    return header.substr(at + 1, end - at - 1);
}

bool parse_fortran_order(const std::string &path, const std::string &header) {
    const size_t at = find_value(path, header, "fortran_order");
    if (header.compare(at, 4, "True") == 0)
        return true;
    if (header.compare(at, 5, "False") == 0)
        return false;
    fail(path, "header's 'fortran_order' is neither True nor False: " + header);
}

std::vector<int64_t> parse_shape(const std::string &path, const std::string &header) {
    size_t i = find_value(path, header, "shape");
    if (i >= header.size() || header[i] != '(')
        fail(path, "header's 'shape' is not a tuple: " + header);
    std::vector<int64_t> shape;
    i = skip_space(header, i + 1);
    while (i < header.size() && header[i] != ')') {
        if (!std::isdigit(static_cast<unsigned char>(header[i])))
            fail(path, "header's 'shape' is not a tuple of non-negative integers: " + header);
        int64_t v = 0;
        while (i < header.size() && std::isdigit(static_cast<unsigned char>(header[i]))) {
            if (v > (int64_t(1) << 56))
                fail(path, "dimension too large in 'shape': " + header);
            v = v * 10 + (header[i++] - '0');
        }
        if (i < header.size() && header[i] == 'L')
            i++; // Python 2 long
        shape.push_back(v);
        i = skip_space(header, i);
        if (i < header.size() && header[i] == ',')
            i = skip_space(header, i + 1);
        else if (i < header.size() && header[i] != ')')
            fail(path, "header's 'shape' is malformed: " + header);
    }
    if (i >= header.size())
        fail(path, "header's 'shape' is not closed: " + header);
    return shape;
}

/** Number of elements of a shape; throws if it does not fit in memory sizes. */
size_t element_count(const std::vector<int64_t> &shape, const std::string &path) {
    size_t n = 1;
    for (const int64_t d : shape) {
        if (d < 0)
            fail(path, "negative dimension in shape " + shape_to_string(shape));
        if (d != 0 && n > (size_t(1) << 60) / size_t(d))
            fail(path, "shape " + shape_to_string(shape) + " is too large");
        n *= size_t(d);
    }
    return n;
}

/** Refuses the first NaN or infinity of data[0, count), elements first .. first + count - 1
 * of an array of \p shape, naming its index in the whole array. */
void check_finite(const std::string &path, const std::vector<int64_t> &shape, const float *data,
                  size_t count, size_t first = 0) {
    for (size_t j = 0; j < count; j++) {
        if (std::isfinite(data[j]))
            continue;
        const size_t i = first + j;
        std::vector<int64_t> index(shape.size());
        size_t rest = i;
        for (size_t d = shape.size(); d-- > 0;) {
            index[d] = int64_t(rest % size_t(shape[d]));
            rest /= size_t(shape[d]);
        }
        const std::string value = std::isnan(data[j]) ? "NaN" : data[j] > 0 ? "inf" : "-inf";
        fail(path, "element " + shape_to_string(index) + " (flat index " + std::to_string(i) +
                       ") is " + value +
                       ": non-finite values are refused unless explicitly allowed");
    }
}

/** Reads and checks the preamble and header of the .npy file \p f (at its start): '<f4', C
 * order; returns the shape and leaves \p f at the first data byte. */
std::vector<int64_t> read_header(const std::string &path, FILE *f,
                                 std::string *descr_out = nullptr) {
    unsigned char preamble[8];
    const size_t got = std::fread(preamble, 1, 8, f);
    if (got < 8 || std::memcmp(preamble, kMagic, 6) != 0)
        fail(path, "not a .npy file (bad magic string, expected \\x93NUMPY)");
    const int major = preamble[6], minor = preamble[7];
    if (major < 1 || major > 3 || minor != 0)
        fail(path, "unsupported format version " + std::to_string(major) + "." +
                       std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
    // Header length: little-endian uint16 in version 1, uint32 in versions 2 and 3.
    const int len_bytes = major == 1 ? 2 : 4;
    unsigned char len_buf[4] = {0, 0, 0, 0};
    if (std::fread(len_buf, 1, len_bytes, f) != size_t(len_bytes))
        fail(path, "truncated header (no header length)");
    size_t header_len = 0;
    for (int i = len_bytes - 1; i >= 0; i--)
        header_len = header_len * 256 + len_buf[i];
    if (header_len > (size_t(1) << 24))
        fail(path, "header length " + std::to_string(header_len) + " is implausible");
    std::string header(header_len, '\0');
    if (std::fread(&header[0], 1, header_len, f) != header_len)
        fail(path, "truncated header (expected " + std::to_string(header_len) + " bytes)");
    const size_t open = skip_space(header, 0);
    if (open >= header.size() || header[open] != '{' || header.find('}') == std::string::npos)
        fail(path, "header is not a dict literal: " + header);

    const std::string descr = parse_descr(path, header);
    if (descr_out)
        *descr_out = descr;
    else if (descr != "<f4")
        fail(path, "dtype '" + descr +
                       "' is not supported (only little-endian float32 '<f4'; "
                       "convert with arr.astype('<f4'))");
    if (parse_fortran_order(path, header))
        fail(path,
             "fortran_order is True (only C order is supported; save np.ascontiguousarray(arr))");
    return parse_shape(path, header);
}

/** The shape against the file's size before anything is allocated: a small file claiming a
 * huge shape fails here. Returns the data bytes the file has (0 if not a regular file). */
uint64_t check_size(const std::string &path, FILE *f, const std::vector<int64_t> &shape, size_t n,
                    size_t element_bytes = 4) {
    struct stat st;
    const long data_start = std::ftell(f);
    if (::fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && data_start >= 0) {
        const uint64_t have =
            uint64_t(st.st_size) - uint64_t(std::min<long long>(st.st_size, data_start));
        if (uint64_t(n) * element_bytes > have)
            fail(path, "truncated data: shape " + shape_to_string(shape) + " needs " +
                           std::to_string(n * element_bytes) + " bytes, the file has " +
                           std::to_string(have));
        return have;
    }
    return 0;
}

/** The preamble and header of a '<f4' C-order .npy file of \p shape, padded so that the
 * data starts at a multiple of 64 bytes (version 2.0 only if the header needs it). */
std::string npy_header(const std::vector<int64_t> &shape) {
    std::string dict =
        "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_to_string(shape) + ", }";
    const bool v2 = dict.size() + 1 + 10 > 65535;
    const size_t preamble = v2 ? 12 : 10;
    const size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
    dict.append(total - preamble - dict.size() - 1, ' ');
    dict += '\n';
    std::string head(kMagic, 6);
    head += char(v2 ? 2 : 1);
    head += char(0);
    const size_t len = dict.size();
    head += char(len & 0xff);
    head += char((len >> 8) & 0xff);
    if (v2) {
        head += char((len >> 16) & 0xff);
        head += char((len >> 24) & 0xff);
    }
    return head + dict;
}

} // namespace

std::string shape_to_string(const std::vector<int64_t> &shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); i++) {
        if (i)
            s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1)
        s += ",";
    return s + ")";
}

NpyArray load_npy(const std::string &path, NonFinite nonfinite) {
    File f(std::fopen(path.c_str(), "rb"));
    if (!f)
        throw IoError("cannot open npy file '" + path + "': " + std::strerror(errno));
    NpyArray a;
    a.shape = read_header(path, f.get());
    const size_t n = element_count(a.shape, path);
    check_size(path, f.get(), a.shape, n);
    a.data.resize(n);
    const size_t read = n ? std::fread(a.data.data(), sizeof(float), n, f.get()) : 0;
    if (read != n)
        fail(path, "truncated data: shape " + shape_to_string(a.shape) + " needs " +
                       std::to_string(n * 4) + " bytes, the file has " + std::to_string(read * 4) +
                       " (or a few more)");
    if (std::fgetc(f.get()) != EOF)
        fail(path, "has data past the " + std::to_string(n * 4) + " bytes of shape " +
                       shape_to_string(a.shape));
    if (nonfinite == NonFinite::Refuse)
        check_finite(path, a.shape, a.data.data(), n);
    return a;
}

std::string npy_dtype(const std::string &path) {
    File f(std::fopen(path.c_str(), "rb"));
    if (!f)
        throw IoError("cannot open npy file '" + path + "': " + std::strerror(errno));
    std::string descr;
    read_header(path, f.get(), &descr);
    return descr;
}

NpyInts load_npy_ints(const std::string &path) {
    File f(std::fopen(path.c_str(), "rb"));
    if (!f)
        throw IoError("cannot open npy file '" + path + "': " + std::strerror(errno));
    std::string descr;
    NpyInts a;
    a.shape = read_header(path, f.get(), &descr);
    if (descr != "<i8" && descr != "<i4")
        fail(path, "dtype '" + descr +
                       "' is not an integer type read here (little-endian int64 '<i8' or int32 "
                       "'<i4')");
    const size_t bytes = descr == "<i8" ? 8 : 4;
    const size_t n = element_count(a.shape, path);
    const uint64_t have = check_size(path, f.get(), a.shape, n, bytes);
    if (have > uint64_t(n) * bytes)
        fail(path, "has data past the " + std::to_string(n * bytes) + " bytes of shape " +
                       shape_to_string(a.shape));
    a.data.resize(n);
    if (bytes == 8) {
        if (n && std::fread(a.data.data(), 8, n, f.get()) != n)
            fail(path, "truncated data: shape " + shape_to_string(a.shape) + " needs " +
                           std::to_string(n * 8) + " bytes");
    } else {
        std::vector<int32_t> v(n);
        if (n && std::fread(v.data(), 4, n, f.get()) != n)
            fail(path, "truncated data: shape " + shape_to_string(a.shape) + " needs " +
                           std::to_string(n * 4) + " bytes");
        std::copy(v.begin(), v.end(), a.data.begin());
    }
    if (std::fgetc(f.get()) != EOF)
        fail(path, "has data past the " + std::to_string(n * bytes) + " bytes of shape " +
                       shape_to_string(a.shape));
    return a;
}

NpyReader::NpyReader(const std::string &path, NonFinite nonfinite)
    : path_(path), nonfinite_(nonfinite) {
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_)
        throw IoError("cannot open npy file '" + path + "': " + std::strerror(errno));
    try {
        shape_ = read_header(path, file_);
        elements_ = element_count(shape_, path);
        const uint64_t have = check_size(path, file_, shape_, elements_);
        if (have > uint64_t(elements_) * 4)
            fail(path, "has data past the " + std::to_string(elements_ * 4) + " bytes of shape " +
                           shape_to_string(shape_));
        data_start_ = std::ftell(file_);
    } catch (...) {
        std::fclose(file_);
        throw;
    }
}

NpyReader::~NpyReader() {
    if (file_)
        std::fclose(file_);
}

void NpyReader::read(size_t first, size_t count, float *out) {
    if (first > elements_ || count > elements_ - first)
        throw std::out_of_range("npy file '" + path_ + "': elements [" + std::to_string(first) +
                                ", " + std::to_string(first + count) + ") outside its " +
                                std::to_string(elements_));
    if (count == 0)
        return;
    if (std::fseek(file_, data_start_ + long(first * 4), SEEK_SET) != 0)
        fail(path_, std::string("cannot seek: ") + std::strerror(errno));
    const size_t got = std::fread(out, sizeof(float), count, file_);
    if (got != count)
        fail(path_, "truncated data: shape " + shape_to_string(shape_) + " needs " +
                        std::to_string(elements_ * 4) + " bytes, the file ends at element " +
                        std::to_string(first + got));
    if (nonfinite_ == NonFinite::Refuse)
        check_finite(path_, shape_, out, count, first);
}

NpyArray load_npy_expect(const std::string &path, const std::vector<int64_t> &expected_shape,
                         NonFinite nonfinite) {
    NpyArray a = load_npy(path, nonfinite);
    if (a.shape != expected_shape)
        fail(path, "shape " + shape_to_string(a.shape) + " does not match the expected shape " +
                       shape_to_string(expected_shape));
    return a;
}

NpyWriter::NpyWriter(const std::string &path, const std::vector<int64_t> &shape) : out_(path) {
    size_t n = 1;
    for (const int64_t d : shape) {
        if (d < 0)
            throw std::invalid_argument("save_npy '" + path + "': negative dimension in " +
                                        shape_to_string(shape));
        n *= size_t(d);
    }
    shape_ = shape;
    elements_ = n;
    out_.write(npy_header(shape));
}

void NpyWriter::write(const float *data, size_t count) {
    if (count > elements_ - written_)
        throw std::invalid_argument("save_npy '" + out_.path() + "': more than the " +
                                    std::to_string(elements_) + " elements of shape " +
                                    shape_to_string(shape_));
    out_.write(data, count * sizeof(float));
    written_ += count;
}

void NpyWriter::close() {
    if (written_ != elements_)
        throw std::invalid_argument("save_npy '" + out_.path() + "': shape " +
                                    shape_to_string(shape_) + " has " + std::to_string(elements_) +
                                    " elements, " + std::to_string(written_) + " were written");
    out_.close();
}

void save_npy(const std::string &path, const std::vector<int64_t> &shape,
              const std::vector<float> &data) {
    size_t n = 1;
    for (const int64_t d : shape) {
        if (d < 0)
            throw std::invalid_argument("save_npy '" + path + "': negative dimension in " +
                                        shape_to_string(shape));
        n *= size_t(d);
    }
    if (n != data.size())
        throw std::invalid_argument("save_npy '" + path + "': shape " + shape_to_string(shape) +
                                    " has " + std::to_string(n) + " elements, data has " +
                                    std::to_string(data.size()));
    NpyWriter w(path, shape);
    w.write(data.data(), data.size());
    w.close();
}

} // namespace sw_io
