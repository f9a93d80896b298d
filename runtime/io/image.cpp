#include "image.h"

#include <png.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <sys/stat.h>

namespace sw_io {

namespace {

/** Where libpng's error callback leaves its message before it longjmps back; refused: the
 * image is well-formed but over the limits (image.h), not corrupt. */
struct PngError {
    char message[256];
    bool refused;
};

void on_png_error(png_structp png, png_const_charp msg) {
    auto *err = static_cast<PngError *>(png_get_error_ptr(png));
    std::snprintf(err->message, sizeof err->message, "%s", msg ? msg : "unknown error");
    png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

/** The libpng part, kept free of C++ objects: longjmp skips destructors, so everything
 * allocated after setjmp is a raw pointer freed on both paths. The header's dimensions are
 * checked against the limits and against what \p file_bytes of compressed data can hold
 * before anything is allocated. On success *pixels is a malloc'ed buffer of width * height
 * * 3 bytes that the caller frees. Returns false with err->message set on failure. */
bool read_png_rgb8(FILE *file, long long file_bytes, PngError *err, png_uint_32 *width,
                   png_uint_32 *height, unsigned char **pixels) {
    png_structp png =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, err, on_png_error, on_png_warning);
    if (!png) {
        std::snprintf(err->message, sizeof err->message, "out of memory");
        return false;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, nullptr, nullptr);
        std::snprintf(err->message, sizeof err->message, "out of memory");
        return false;
    }
    // Assigned after setjmp, read after a longjmp: volatile.
    unsigned char *volatile buffer = nullptr;
    png_bytep *volatile rows = nullptr;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, nullptr);
        std::free(buffer);
        std::free(rows);
        return false;
    }
    png_init_io(png, file);
    png_read_info(png, info);
    const png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    const int color = png_get_color_type(png, info);
    const int depth = png_get_bit_depth(png, info);
    if (w > png_uint_32(kMaxImageSide) || h > png_uint_32(kMaxImageSide) ||
        uint64_t(w) * h > uint64_t(kMaxImagePixels)) {
        std::snprintf(
            err->message, sizeof err->message,
            "image of %u x %u pixels is larger than accepted (at most %d pixels a side and %lld "
            "pixels)",
            unsigned(w), unsigned(h), kMaxImageSide, (long long)kMaxImagePixels);
        err->refused = true;
        png_longjmp(png, 1);
    }
    // Rows of the file's own format, one filter byte each: deflate gives at most ~1032
    // bytes per compressed byte, so a small file cannot hold a large image.
    const uint64_t raw_bytes = uint64_t(h) * (png_get_rowbytes(png, info) + 1);
    if (raw_bytes > uint64_t(kMaxDeflateRatio) * uint64_t(file_bytes) + 4096) {
        std::snprintf(err->message, sizeof err->message,
                      "header claims %u x %u pixels (%llu bytes of image data), more than a file "
                      "of %lld bytes "
                      "can hold: truncated or corrupt",
                      unsigned(w), unsigned(h), (unsigned long long)raw_bytes, file_bytes);
        err->refused = true;
        png_longjmp(png, 1);
    }

    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    if (depth == 16)
        png_set_scale_16(png);
    png_set_strip_alpha(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_gray_to_rgb(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);

    const size_t row_bytes = png_get_rowbytes(png, info);
    if (row_bytes != size_t(w) * 3)
        png_error(png, "unexpected row size after conversion to RGB");
    if (h > 0 && row_bytes > (size_t(1) << 40) / h)
        png_error(png, "image too large");
    buffer = static_cast<unsigned char *>(std::malloc(row_bytes * h));
    rows = static_cast<png_bytep *>(std::malloc(sizeof(png_bytep) * h));
    if (!buffer || !rows)
        png_error(png, "out of memory");
    for (png_uint_32 y = 0; y < h; y++)
        rows[y] = buffer + y * row_bytes;
    png_read_image(png, rows);
    png_read_end(png, nullptr);

    png_destroy_read_struct(&png, &info, nullptr);
    std::free(rows);
    *width = w;
    *height = h;
    *pixels = buffer;
    return true;
}

} // namespace

RgbImage load_png_rgb(const std::string &path) {
    FILE *file = std::fopen(path.c_str(), "rb");
    if (!file)
        throw IoError(path + ": cannot open PNG file: " + std::strerror(errno));
    struct stat st;
    const long long file_bytes = ::fstat(fileno(file), &st) == 0 ? (long long)st.st_size : 0;
    unsigned char signature[8];
    const size_t got = std::fread(signature, 1, sizeof signature, file);
    if (got != sizeof signature || png_sig_cmp(signature, 0, sizeof signature) != 0) {
        std::fclose(file);
        throw IoError(path + ": not a PNG file (no PNG signature)");
    }
    std::rewind(file);

    PngError err{};
    png_uint_32 w = 0, h = 0;
    unsigned char *pixels = nullptr;
    const bool ok = read_png_rgb8(file, file_bytes, &err, &w, &h, &pixels);
    std::fclose(file);
    if (!ok && err.refused)
        throw IoError(path + ": " + err.message);
    if (!ok)
        throw IoError(path +
                      ": cannot read PNG file: truncated or corrupt (libpng: " + err.message + ")");
    RgbImage img;
    img.width = int(w);
    img.height = int(h);
    img.data.assign(pixels, pixels + size_t(w) * h * 3);
    std::free(pixels);
    return img;
}

int imagenet_resize_for(int out_size) {
    if (out_size == 227)
        return 256;
    return int(std::lround(out_size * 256.0 / 224.0));
}

namespace {

/** Resampling weights along one axis, as PIL's bilinear filter: a triangle of radius 1
 * output pixel, widened to the input spacing when shrinking (antialiasing), normalised.
 * Only outputs [from, from + count) of the out_size resized pixels are made (the centre
 * crop): a very long thin image costs the crop, not its resized length.
 * Output pixel i (from 0) covers input positions [first[i], first[i] + count) with weights w. */
struct Axis {
    std::vector<int> first, count;
    std::vector<std::vector<double>> w;
};

Axis resample_axis(int in_size, int out_size, int from, int count) {
    const double scale = double(in_size) / out_size;
    const double support = std::max(scale, 1.0);
    Axis a;
    for (int i = from; i < from + count; i++) {
        const double centre = (i + 0.5) * scale;
        const int lo = std::max(int(centre - support + 0.5), 0);
        const int hi = std::min(int(centre + support + 0.5), in_size);
        std::vector<double> w;
        double total = 0;
        for (int j = lo; j < hi; j++) {
            const double t = std::fabs((j + 0.5 - centre) / support);
            w.push_back(t < 1 ? 1 - t : 0);
            total += w.back();
        }
        if (total > 0)
            for (double &v : w)
                v /= total;
        a.first.push_back(lo);
        a.count.push_back(hi - lo);
        a.w.push_back(std::move(w));
    }
    return a;
}

} // namespace

std::vector<float> preprocess_imagenet(const RgbImage &rgb, int out_size, int resize_to) {
    if (rgb.width <= 0 || rgb.height <= 0 || rgb.data.size() != size_t(rgb.width) * rgb.height * 3)
        throw std::invalid_argument("preprocess_imagenet: empty or inconsistent image");
    if (resize_to <= 0)
        resize_to = imagenet_resize_for(out_size);
    if (out_size <= 0 || resize_to < out_size)
        throw std::invalid_argument("preprocess_imagenet: resize_to " + std::to_string(resize_to) +
                                    " is smaller than the crop " + std::to_string(out_size));
    // Shorter side to resize_to; the other side scaled alike and truncated (torchvision).
    int rw, rh;
    if (rgb.width <= rgb.height) {
        rw = resize_to;
        rh = int(int64_t(resize_to) * rgb.height / rgb.width);
    } else {
        rh = resize_to;
        rw = int(int64_t(resize_to) * rgb.width / rgb.height);
    }
    // Centre crop offsets, rounded half to even as Python's round() in torchvision.
    const int left = int(std::nearbyint((rw - out_size) / 2.0));
    const int top = int(std::nearbyint((rh - out_size) / 2.0));

    const Axis ax = resample_axis(rgb.width, rw, left, out_size),
               ay = resample_axis(rgb.height, rh, top, out_size);
    const size_t plane = size_t(out_size) * out_size;
    std::vector<float> out(3 * plane);
    // Horizontal pass over the needed columns of every input row, then vertical.
    std::vector<double> rows(size_t(rgb.height) * out_size * 3);
    for (int y = 0; y < rgb.height; y++)
        for (int x = 0; x < out_size; x++) {
            for (int c = 0; c < 3; c++) {
                double acc = 0;
                for (int k = 0; k < ax.count[x]; k++)
                    acc += ax.w[x][k] * rgb.at(ax.first[x] + k, y, c);
                rows[(size_t(y) * out_size + x) * 3 + c] = acc;
            }
        }
    for (int y = 0; y < out_size; y++) {
        for (int x = 0; x < out_size; x++)
            for (int c = 0; c < 3; c++) {
                double acc = 0;
                for (int k = 0; k < ay.count[y]; k++)
                    acc += ay.w[y][k] * rows[(size_t(ay.first[y] + k) * out_size + x) * 3 + c];
                const double v = std::min(std::max(acc, 0.0), 255.0) / 255.0;
                out[c * plane + size_t(y) * out_size + x] =
                    float((v - double(kImagenetMean[c])) / double(kImagenetStd[c]));
            }
    }
    return out;
}

} // namespace sw_io
