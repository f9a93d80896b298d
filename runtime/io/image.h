/** \file
 * PNG loading (libpng) and ImageNet preprocessing, plain C++17.
 */
#ifndef SW_IO_IMAGE_H
#define SW_IO_IMAGE_H

#include "io_error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sw_io {

/** An 8-bit RGB image, interleaved, rows top to bottom: data[(y * width + x) * 3 + c]. */
struct RgbImage {
    int width = 0, height = 0;
    std::vector<uint8_t> data;
    uint8_t at(int x, int y, int c) const { return data[(size_t(y) * width + x) * 3 + c]; }
};

/** The largest image load_png_rgb accepts: kMaxImageSide pixels a side and kMaxImagePixels
 * pixels in all (192 MiB of RGB; ImageNet photographs are a few thousand pixels a side). */
constexpr int kMaxImageSide = 16384;
constexpr long long kMaxImagePixels = 1LL << 26;
/** Most bytes of image data one compressed byte can hold (deflate's limit is about 1032:1). */
constexpr int kMaxDeflateRatio = 1032;

/** Reads any PNG (palette, gray, gray+alpha, RGB, RGBA; 1 to 16 bits, interlaced or not)
 * as 8-bit RGB: palettes and gray are expanded, alpha is dropped (not composited), 16-bit
 * samples are scaled to 8 bits. Throws IoError "FILE: ..." if it is missing, not a PNG,
 * truncated or corrupt, or if its header claims more pixels than the limits above or than
 * the file's size can hold: checked before anything is allocated, so a small file claiming
 * a huge image fails at once. */
RgbImage load_png_rgb(const std::string &path);

/** ImageNet's per-channel mean and standard deviation (RGB, on [0, 1] values). */
constexpr float kImagenetMean[3] = {0.485f, 0.456f, 0.406f};
constexpr float kImagenetStd[3] = {0.229f, 0.224f, 0.225f};

/** The usual ImageNet evaluation transform (torchvision's Resize(resize_to),
 * CenterCrop(out_size), ToTensor(), Normalize(mean, std)):
 * - resize so that the shorter side is resize_to (the longer one is scaled by the same
 *   factor, truncated), bilinear (triangle filter widened when shrinking, as PIL does);
 *   resize_to <= 0 means imagenet_resize_for(out_size) (256 for 224 and for 227);
 * - crop the centre out_size x out_size;
 * - scale to [0, 1] and normalise each channel: (v - mean[c]) / std[c].
 * Returns planar CHW floats, x fastest: out[(c * out_size + y) * out_size + x].
 * Only the cropped part of the resized image is computed (work and memory are of the
 * crop times the image's height, however long its resized side).
 * Throws std::invalid_argument for an empty image or resize_to < out_size. */
std::vector<float> preprocess_imagenet(const RgbImage &rgb, int out_size = 224, int resize_to = 0);

/** The default shorter side for an out_size crop: round(out_size * 256 / 224), except 256
 * for AlexNet's 227 crop (Caffe's convention: 256 x 256 images, 227 crop). */
int imagenet_resize_for(int out_size);

} // namespace sw_io

#endif
