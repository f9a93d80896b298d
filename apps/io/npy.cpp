#include "npy.h"

#include "output_file.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <sys/stat.h>

namespace sw_io {

namespace {

const char kMagic[] = "\x93NUMPY";  // 6 bytes, then major and minor version bytes

struct FileCloser {
    void operator()(FILE *f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

[[noreturn]] void fail(const std::string &path, const std::string &what) {
    throw IoError("npy file '" + path + "': " + what);
}

size_t skip_space(const std::string &s, size_t i) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) i++;
    return i;
}

/** Position of the value of key in the header's dict literal ('key' or "key", then ':'). */
size_t find_value(const std::string &path, const std::string &header, const std::string &key) {
    for (const char q : {'\'', '"'}) {
        const size_t at = header.find(q + key + q);
        if (at == std::string::npos) continue;
        const size_t colon = skip_space(header, at + key.size() + 2);
        if (colon < header.size() && header[colon] == ':') return skip_space(header, colon + 1);
    }
    fail(path, "header has no '" + key + "' entry: " + header);
}

std::string parse_descr(const std::string &path, const std::string &header) {
    const size_t at = find_value(path, header, "descr");
    const char q = at < header.size() ? header[at] : 0;
    const size_t end = (q == '\'' || q == '"') ? header.find(q, at + 1) : std::string::npos;
    if (end == std::string::npos) fail(path, "header's 'descr' is not a string: " + header);
    return header.substr(at + 1, end - at - 1);
}

bool parse_fortran_order(const std::string &path, const std::string &header) {
    const size_t at = find_value(path, header, "fortran_order");
    if (header.compare(at, 4, "True") == 0) return true;
    if (header.compare(at, 5, "False") == 0) return false;
    fail(path, "header's 'fortran_order' is neither True nor False: " + header);
}

std::vector<int64_t> parse_shape(const std::string &path, const std::string &header) {
    size_t i = find_value(path, header, "shape");
    if (i >= header.size() || header[i] != '(') fail(path, "header's 'shape' is not a tuple: " + header);
    std::vector<int64_t> shape;
    i = skip_space(header, i + 1);
    while (i < header.size() && header[i] != ')') {
        if (!std::isdigit(static_cast<unsigned char>(header[i])))
            fail(path, "header's 'shape' is not a tuple of non-negative integers: " + header);
        int64_t v = 0;
        while (i < header.size() && std::isdigit(static_cast<unsigned char>(header[i]))) {
            if (v > (int64_t(1) << 56)) fail(path, "dimension too large in 'shape': " + header);
            v = v * 10 + (header[i++] - '0');
        }
        if (i < header.size() && header[i] == 'L') i++;  // Python 2 long
        shape.push_back(v);
        i = skip_space(header, i);
        if (i < header.size() && header[i] == ',') i = skip_space(header, i + 1);
        else if (i < header.size() && header[i] != ')')
            fail(path, "header's 'shape' is malformed: " + header);
    }
    if (i >= header.size()) fail(path, "header's 'shape' is not closed: " + header);
    return shape;
}

/** Number of elements of a shape; throws if it does not fit in memory sizes. */
size_t element_count(const std::vector<int64_t> &shape, const std::string &path) {
    size_t n = 1;
    for (const int64_t d : shape) {
        if (d < 0) fail(path, "negative dimension in shape " + shape_to_string(shape));
        if (d != 0 && n > (size_t(1) << 60) / size_t(d))
            fail(path, "shape " + shape_to_string(shape) + " is too large");
        n *= size_t(d);
    }
    return n;
}

/** Refuses the first NaN or infinity of \p a, naming its index in the array's shape. */
void check_finite(const std::string &path, const NpyArray &a) {
    for (size_t i = 0; i < a.data.size(); i++) {
        if (std::isfinite(a.data[i])) continue;
        std::vector<int64_t> index(a.shape.size());
        size_t rest = i;
        for (size_t d = a.shape.size(); d-- > 0;) {
            index[d] = int64_t(rest % size_t(a.shape[d]));
            rest /= size_t(a.shape[d]);
        }
        const std::string value = std::isnan(a.data[i]) ? "NaN" : a.data[i] > 0 ? "inf" : "-inf";
        fail(path, "element " + shape_to_string(index) + " (flat index " + std::to_string(i) + ") is " + value +
                       ": non-finite values are refused unless explicitly allowed");
    }
}

}  // namespace

std::string shape_to_string(const std::vector<int64_t> &shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); i++) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

NpyArray load_npy(const std::string &path, NonFinite nonfinite) {
    File f(std::fopen(path.c_str(), "rb"));
    if (!f) throw IoError("cannot open npy file '" + path + "': " + std::strerror(errno));

    unsigned char preamble[8];
    const size_t got = std::fread(preamble, 1, 8, f.get());
    if (got < 8 || std::memcmp(preamble, kMagic, 6) != 0)
        fail(path, "not a .npy file (bad magic string, expected \\x93NUMPY)");
    const int major = preamble[6], minor = preamble[7];
    if (major < 1 || major > 3 || minor != 0)
        fail(path, "unsupported format version " + std::to_string(major) + "." + std::to_string(minor) +
                       " (supported: 1.0, 2.0, 3.0)");
    // Header length: little-endian uint16 in version 1, uint32 in versions 2 and 3.
    const int len_bytes = major == 1 ? 2 : 4;
    unsigned char len_buf[4] = {0, 0, 0, 0};
    if (std::fread(len_buf, 1, len_bytes, f.get()) != size_t(len_bytes))
        fail(path, "truncated header (no header length)");
    size_t header_len = 0;
    for (int i = len_bytes - 1; i >= 0; i--) header_len = header_len * 256 + len_buf[i];
    if (header_len > (size_t(1) << 24)) fail(path, "header length " + std::to_string(header_len) + " is implausible");
    std::string header(header_len, '\0');
    if (std::fread(&header[0], 1, header_len, f.get()) != header_len)
        fail(path, "truncated header (expected " + std::to_string(header_len) + " bytes)");
    const size_t open = skip_space(header, 0);
    if (open >= header.size() || header[open] != '{' || header.find('}') == std::string::npos)
        fail(path, "header is not a dict literal: " + header);

    const std::string descr = parse_descr(path, header);
    if (descr != "<f4")
        fail(path, "dtype '" + descr + "' is not supported (only little-endian float32 '<f4'; "
                   "convert with arr.astype('<f4'))");
    if (parse_fortran_order(path, header))
        fail(path, "fortran_order is True (only C order is supported; save np.ascontiguousarray(arr))");

    NpyArray a;
    a.shape = parse_shape(path, header);
    const size_t n = element_count(a.shape, path);
    // The shape against the file's size before allocating: a small file claiming a huge
    // shape fails here, not after the allocation.
    struct stat st;
    const long data_start = std::ftell(f.get());
    if (::fstat(fileno(f.get()), &st) == 0 && S_ISREG(st.st_mode) && data_start >= 0) {
        const uint64_t have = uint64_t(st.st_size) - uint64_t(std::min<long long>(st.st_size, data_start));
        if (uint64_t(n) * 4 > have)
            fail(path, "truncated data: shape " + shape_to_string(a.shape) + " needs " + std::to_string(n * 4) +
                           " bytes, the file has " + std::to_string(have));
    }
    a.data.resize(n);
    const size_t read = n ? std::fread(a.data.data(), sizeof(float), n, f.get()) : 0;
    if (read != n)
        fail(path, "truncated data: shape " + shape_to_string(a.shape) + " needs " + std::to_string(n * 4) +
                       " bytes, the file has " + std::to_string(read * 4) + " (or a few more)");
    if (std::fgetc(f.get()) != EOF)
        fail(path, "has data past the " + std::to_string(n * 4) + " bytes of shape " + shape_to_string(a.shape));
    if (nonfinite == NonFinite::Refuse) check_finite(path, a);
    return a;
}

NpyArray load_npy_expect(const std::string &path, const std::vector<int64_t> &expected_shape, NonFinite nonfinite) {
    NpyArray a = load_npy(path, nonfinite);
    if (a.shape != expected_shape)
        fail(path, "shape " + shape_to_string(a.shape) + " does not match the expected shape " +
                       shape_to_string(expected_shape));
    return a;
}

void save_npy(const std::string &path, const std::vector<int64_t> &shape, const std::vector<float> &data) {
    size_t n = 1;
    for (const int64_t d : shape) {
        if (d < 0) throw std::invalid_argument("save_npy '" + path + "': negative dimension in " + shape_to_string(shape));
        n *= size_t(d);
    }
    if (n != data.size())
        throw std::invalid_argument("save_npy '" + path + "': shape " + shape_to_string(shape) + " has " +
                                    std::to_string(n) + " elements, data has " + std::to_string(data.size()));
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_to_string(shape) + ", }";
    // Pad with spaces and end with '\n' so that the data starts at a multiple of 64 bytes.
    const bool v2 = dict.size() + 1 + 10 > 65535;
    const size_t preamble = v2 ? 12 : 10;
    const size_t total = (preamble + dict.size() + 1 + 63) / 64 * 64;
    dict.append(total - preamble - dict.size() - 1, ' ');
    dict += '\n';

    OutputFile out(path);
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
    head += dict;
    out.write(head);
    out.write(data.data(), data.size() * sizeof(float));
    out.close();
}

}  // namespace sw_io
