/** \file
 * sw_io: PNG loading of every colour type and bit depth (files written here with libpng),
 * ImageNet preprocessing, .npy reading and writing, weight stores, deterministic weights,
 * label lists, output files, and the IoError of every malformed input: huge claimed sizes
 * refused fast under an address-space limit, NaN/Inf refused unless allowed, unwritable
 * outputs refused before the run and write errors reported at close.
 */
#include "runtime/io/image.h"
#include "runtime/io/npy.h"
#include "runtime/io/output_file.h"
#include "runtime/io/weights.h"

#include <gtest/gtest.h>
#include <png.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace sw_io;

namespace {

/** A fresh directory per test (tests may run in parallel under CTest). */
class IoTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               (std::string("io_test_") + info->name() + "_" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string &name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

struct PngSpec {
    PngSpec(int w, int h, int color, int depth)
        : width(w), height(h), color_type(color), bit_depth(depth) {}
    int width, height, color_type, bit_depth;
    bool interlaced = false;
    std::vector<png_color> palette;
    std::vector<unsigned char> trns; // palette alpha
};

/** Writes a PNG with libpng; rows are given in the file's own packed format. Returns
 * false on a libpng error. */
bool write_png(const std::string &file_path, const PngSpec &s,
               const std::vector<std::vector<unsigned char>> &rows) {
    FILE *f = std::fopen(file_path.c_str(), "wb");
    if (!f)
        return false;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    std::vector<png_bytep> ptrs; // filled before setjmp: not touched after a longjmp
    for (const auto &r : rows)
        ptrs.push_back(const_cast<png_bytep>(r.data()));
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        std::fclose(f);
        return false;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, s.width, s.height, s.bit_depth, s.color_type,
                 s.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (!s.palette.empty())
        png_set_PLTE(png, info, s.palette.data(), int(s.palette.size()));
    if (!s.trns.empty())
        png_set_tRNS(png, info, s.trns.data(), int(s.trns.size()), nullptr);
    png_write_info(png, info);
    if (s.interlaced)
        png_set_interlace_handling(png);
    png_write_image(png, ptrs.data());
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return std::fclose(f) == 0;
}

std::vector<unsigned char> be16(std::initializer_list<unsigned> values) {
    std::vector<unsigned char> out;
    for (unsigned v : values) {
        out.push_back((v >> 8) & 0xff);
        out.push_back(v & 0xff);
    }
    return out;
}

void expect_pixel(const RgbImage &img, int x, int y, int r, int g, int b) {
    EXPECT_EQ(img.at(x, y, 0), r) << "pixel " << x << "," << y << " red";
    EXPECT_EQ(img.at(x, y, 1), g) << "pixel " << x << "," << y << " green";
    EXPECT_EQ(img.at(x, y, 2), b) << "pixel " << x << "," << y << " blue";
}

/** Runs f, expects an IoError whose message contains every one of parts. */
template <typename F> void expect_io_error(F f, std::initializer_list<std::string> parts) {
    try {
        f();
        ADD_FAILURE() << "no IoError thrown";
    } catch (const IoError &e) {
        const std::string msg = e.what();
        for (const auto &p : parts)
            EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    }
}

void write_bytes(const std::string &p, const std::string &bytes) {
    std::ofstream(p, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read_bytes(const std::string &p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/** A .npy file by hand: magic, version, header length of the version's width, header. */
std::string npy_bytes(int major, const std::string &dict, const std::vector<float> &data) {
    std::string h = dict;
    const size_t pre = major == 1 ? 10 : 12;
    while ((pre + h.size() + 1) % 64)
        h += ' ';
    h += '\n';
    std::string s = std::string("\x93NUMPY", 6) + char(major) + char(0);
    const size_t n = h.size();
    s += char(n & 0xff);
    s += char(n >> 8);
    if (major > 1)
        s += std::string(2, '\0');
    s += h;
    s.append(reinterpret_cast<const char *>(data.data()), data.size() * sizeof(float));
    return s;
}

} // namespace

// ---------------------------------------------------------------- PNG

TEST_F(IoTest, PngRgb8) {
    const PngSpec s{3, 2, PNG_COLOR_TYPE_RGB, 8};
    ASSERT_TRUE(write_png(path("rgb.png"), s,
                          {{255, 0, 0, 0, 255, 0, 0, 0, 255}, {1, 2, 3, 100, 150, 200, 7, 8, 9}}));
    const RgbImage img = load_png_rgb(path("rgb.png"));
    ASSERT_EQ(img.width, 3);
    ASSERT_EQ(img.height, 2);
    ASSERT_EQ(img.data.size(), 18u);
    expect_pixel(img, 0, 0, 255, 0, 0);
    expect_pixel(img, 1, 0, 0, 255, 0);
    expect_pixel(img, 2, 0, 0, 0, 255);
    expect_pixel(img, 0, 1, 1, 2, 3);
    expect_pixel(img, 1, 1, 100, 150, 200);
    expect_pixel(img, 2, 1, 7, 8, 9);
}

TEST_F(IoTest, PngGray8AndGray1) {
    ASSERT_TRUE(write_png(path("g8.png"), {2, 1, PNG_COLOR_TYPE_GRAY, 8}, {{17, 240}}));
    RgbImage img = load_png_rgb(path("g8.png"));
    ASSERT_EQ(img.width, 2);
    expect_pixel(img, 0, 0, 17, 17, 17);
    expect_pixel(img, 1, 0, 240, 240, 240);

    // 1-bit gray: 10 pixels packed MSB first, 1 -> 255.
    ASSERT_TRUE(write_png(path("g1.png"), {10, 1, PNG_COLOR_TYPE_GRAY, 1}, {{0xA5, 0x80}}));
    img = load_png_rgb(path("g1.png"));
    ASSERT_EQ(img.width, 10);
    const int bits[10] = {1, 0, 1, 0, 0, 1, 0, 1, 1, 0};
    for (int x = 0; x < 10; x++)
        expect_pixel(img, x, 0, bits[x] * 255, bits[x] * 255, bits[x] * 255);
}

TEST_F(IoTest, PngPalette) {
    PngSpec s{5, 1, PNG_COLOR_TYPE_PALETTE, 4};
    s.palette = {{10, 20, 30}, {200, 100, 50}, {0, 255, 128}};
    s.trns = {255, 0, 128}; // alpha is dropped, not composited
    // 4-bit indices 0 1 2 1 0, packed two per byte.
    ASSERT_TRUE(write_png(path("pal.png"), s, {{0x01, 0x21, 0x00}}));
    const RgbImage img = load_png_rgb(path("pal.png"));
    ASSERT_EQ(img.width, 5);
    expect_pixel(img, 0, 0, 10, 20, 30);
    expect_pixel(img, 1, 0, 200, 100, 50);
    expect_pixel(img, 2, 0, 0, 255, 128);
    expect_pixel(img, 3, 0, 200, 100, 50);
    expect_pixel(img, 4, 0, 10, 20, 30);
}

TEST_F(IoTest, Png16Bit) {
    // 16 -> 8 bits scales with rounding: v * 255 / 65535.
    ASSERT_TRUE(write_png(path("rgb16.png"), {2, 1, PNG_COLOR_TYPE_RGB, 16},
                          {be16({0xFFFF, 0x0000, 0x8080, 0x1234, 0x0101, 0xFEFF})}));
    RgbImage img = load_png_rgb(path("rgb16.png"));
    expect_pixel(img, 0, 0, 255, 0, 128);
    expect_pixel(img, 1, 0, 18, 1, 254);

    ASSERT_TRUE(write_png(path("ga16.png"), {1, 1, PNG_COLOR_TYPE_GRAY_ALPHA, 16},
                          {be16({0x6464, 0x0000})}));
    img = load_png_rgb(path("ga16.png"));
    expect_pixel(img, 0, 0, 100, 100, 100);
}

TEST_F(IoTest, PngRgbaAndInterlaced) {
    ASSERT_TRUE(write_png(path("rgba.png"), {2, 1, PNG_COLOR_TYPE_RGB_ALPHA, 8},
                          {{9, 8, 7, 0, 60, 70, 80, 255}}));
    RgbImage img = load_png_rgb(path("rgba.png"));
    expect_pixel(img, 0, 0, 9, 8, 7);
    expect_pixel(img, 1, 0, 60, 70, 80);

    PngSpec s{13, 11, PNG_COLOR_TYPE_RGB, 8};
    s.interlaced = true;
    std::vector<std::vector<unsigned char>> rows(11, std::vector<unsigned char>(13 * 3));
    for (int y = 0; y < 11; y++)
        for (int x = 0; x < 13; x++)
            for (int c = 0; c < 3; c++)
                rows[y][x * 3 + c] = (unsigned char)(x * 19 + y * 7 + c * 50);
    ASSERT_TRUE(write_png(path("adam7.png"), s, rows));
    img = load_png_rgb(path("adam7.png"));
    ASSERT_EQ(img.width, 13);
    ASSERT_EQ(img.height, 11);
    for (int y = 0; y < 11; y++)
        for (int x = 0; x < 13; x++)
            for (int c = 0; c < 3; c++)
                ASSERT_EQ(img.at(x, y, c), rows[y][x * 3 + c]) << x << "," << y << "," << c;
}

TEST_F(IoTest, PngErrors) {
    const std::string missing = path("no_such.png");
    expect_io_error([&] { load_png_rgb(missing); }, {missing, "cannot open"});

    write_bytes(path("text.png"), "this is not a picture, just some text\n");
    expect_io_error([&] { load_png_rgb(path("text.png")); }, {path("text.png"), "not a PNG"});
    write_bytes(path("empty.png"), "");
    expect_io_error([&] { load_png_rgb(path("empty.png")); }, {path("empty.png"), "not a PNG"});

    // Noise does not compress: cutting the file in half cuts the image data.
    const int w = 64, h = 64;
    std::vector<std::vector<unsigned char>> rows(h, std::vector<unsigned char>(w * 3));
    std::mt19937 rng(1);
    for (auto &r : rows)
        for (auto &v : r)
            v = (unsigned char)(rng() & 0xff);
    ASSERT_TRUE(write_png(path("full.png"), {w, h, PNG_COLOR_TYPE_RGB, 8}, rows));
    ASSERT_NO_THROW(load_png_rgb(path("full.png")));
    const std::string bytes = read_bytes(path("full.png"));
    write_bytes(path("half.png"), bytes.substr(0, bytes.size() / 2));
    expect_io_error([&] { load_png_rgb(path("half.png")); }, {path("half.png"), "truncated"});
    // Only the signature and part of the IHDR chunk.
    write_bytes(path("head.png"), bytes.substr(0, 20));
    expect_io_error([&] { load_png_rgb(path("head.png")); }, {path("head.png"), "truncated"});
    // A corrupted IHDR (CRC mismatch).
    std::string bad = bytes;
    bad[17] ^= 0x55;
    write_bytes(path("crc.png"), bad);
    expect_io_error([&] { load_png_rgb(path("crc.png")); }, {path("crc.png")});
}

TEST_F(IoTest, BundledSampleImage) {
    const RgbImage img = load_png_rgb(SAMPLE_PNG);
    EXPECT_EQ(img.width, 320);
    EXPECT_EQ(img.height, 240);
    const std::vector<float> x = preprocess_imagenet(img, 224);
    ASSERT_EQ(x.size(), 3u * 224 * 224);
    for (int c = 0; c < 3; c++) {
        const float lo = (0 - kImagenetMean[c]) / kImagenetStd[c],
                    hi = (1 - kImagenetMean[c]) / kImagenetStd[c];
        double sum = 0;
        for (int i = 0; i < 224 * 224; i++) {
            const float v = x[c * 224 * 224 + i];
            ASSERT_TRUE(v >= lo - 1e-5f && v <= hi + 1e-5f) << v;
            sum += v;
        }
        EXPECT_GT(std::fabs(sum), 0.0); // not a blank picture
    }
}

// ---------------------------------------------------------------- preprocessing

TEST(Preprocess, ConstantImageGivesNormalisedConstant) {
    for (const auto &size : std::vector<std::pair<int, int>>{{300, 200}, {199, 401}, {256, 256}}) {
        RgbImage img;
        img.width = size.first;
        img.height = size.second;
        for (int i = 0; i < img.width * img.height; i++)
            img.data.insert(img.data.end(), {51, 128, 230});
        const std::vector<float> x = preprocess_imagenet(img, 224);
        ASSERT_EQ(x.size(), 3u * 224 * 224);
        const int rgb[3] = {51, 128, 230};
        for (int c = 0; c < 3; c++) {
            const float expect = float((rgb[c] / 255.0 - kImagenetMean[c]) / kImagenetStd[c]);
            for (int i = 0; i < 224 * 224; i++)
                ASSERT_FLOAT_EQ(x[c * 224 * 224 + i], expect) << "channel " << c;
        }
    }
}

TEST(Preprocess, NoResizeIsACentreCrop) {
    // A 256 x 256 image is not resampled; the 224 crop starts at (16, 16). Planar CHW.
    RgbImage img;
    img.width = img.height = 256;
    std::mt19937 rng(3);
    for (int i = 0; i < 256 * 256 * 3; i++)
        img.data.push_back((uint8_t)(rng() & 0xff));
    const std::vector<float> x = preprocess_imagenet(img, 224, 256);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 224; y += 7)
            for (int xx = 0; xx < 224; xx += 5) {
                const float expect = float((img.at(xx + 16, y + 16, c) / 255.0 - kImagenetMean[c]) /
                                           kImagenetStd[c]);
                ASSERT_FLOAT_EQ(x[(c * 224 + y) * 224 + xx], expect);
            }
}

TEST(Preprocess, DefaultResizeAndArguments) {
    EXPECT_EQ(imagenet_resize_for(224), 256);
    EXPECT_EQ(imagenet_resize_for(227), 256);
    EXPECT_EQ(imagenet_resize_for(299), 342);
    RgbImage img;
    img.width = img.height = 8;
    img.data.assign(8 * 8 * 3, 0);
    EXPECT_EQ(preprocess_imagenet(img, 4).size(), 3u * 4 * 4);
    EXPECT_THROW(preprocess_imagenet(img, 4, 3), std::invalid_argument);
    EXPECT_THROW(preprocess_imagenet(RgbImage{}, 4), std::invalid_argument);
}

// ---------------------------------------------------------------- npy

TEST_F(IoTest, NpyRoundTrip) {
    std::vector<float> data(24);
    for (size_t i = 0; i < data.size(); i++)
        data[i] = float(i) * 0.5f - 3.25f;
    save_npy(path("a.npy"), {2, 3, 4}, data);
    NpyArray a = load_npy(path("a.npy"));
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3, 4}));
    EXPECT_EQ(a.data, data);
    // The exact bytes NumPy writes for the same array (header padded to 64 bytes).
    const std::string bytes = read_bytes(path("a.npy"));
    ASSERT_EQ(bytes.size(), 128u + 24 * 4);
    EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }";
    EXPECT_EQ(bytes.substr(10, dict.size()), dict);
    EXPECT_EQ(bytes.substr(10 + dict.size(), 117 - dict.size()),
              std::string(117 - dict.size(), ' '));
    EXPECT_EQ(bytes[127], '\n');

    save_npy(path("v.npy"), {5}, {1, 2, 3, 4, 5});
    a = load_npy_expect(path("v.npy"), {5});
    EXPECT_EQ(a.data, (std::vector<float>{1, 2, 3, 4, 5}));
    save_npy(path("s.npy"), {}, {42});
    a = load_npy(path("s.npy"));
    EXPECT_TRUE(a.shape.empty());
    EXPECT_EQ(a.data, std::vector<float>{42});
    save_npy(path("z.npy"), {0, 3}, {});
    a = load_npy(path("z.npy"));
    EXPECT_EQ(a.shape, (std::vector<int64_t>{0, 3}));
    EXPECT_TRUE(a.data.empty());
    EXPECT_THROW(save_npy(path("bad.npy"), {2, 2}, {1, 2, 3}), std::invalid_argument);
    expect_io_error([&] { save_npy(path("no_dir/x.npy"), {1}, {1}); }, {path("no_dir/x.npy")});
}

TEST_F(IoTest, NpyVersions2And3AndDoubleQuotes) {
    write_bytes(
        path("v2.npy"),
        npy_bytes(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", {1.5f, -2}));
    EXPECT_EQ(load_npy(path("v2.npy")).data, (std::vector<float>{1.5f, -2}));
    write_bytes(
        path("v3.npy"),
        npy_bytes(3, "{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"<f4\"}", {7, 8}));
    const NpyArray a = load_npy(path("v3.npy"));
    EXPECT_EQ(a.shape, (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(a.data, (std::vector<float>{7, 8}));
}

TEST_F(IoTest, NpyErrors) {
    const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
    const std::vector<float> four = {1, 2, 3, 4};

    expect_io_error([&] { load_npy(path("missing.npy")); }, {path("missing.npy"), "cannot open"});

    std::string b = npy_bytes(1, ok, four);
    b[1] = 'X';
    write_bytes(path("magic.npy"), b);
    expect_io_error([&] { load_npy(path("magic.npy")); }, {path("magic.npy"), "magic"});

    b = npy_bytes(1, ok, four);
    b[6] = 4;
    write_bytes(path("version.npy"), b);
    expect_io_error([&] { load_npy(path("version.npy")); }, {path("version.npy"), "version 4.0"});

    write_bytes(path("f8.npy"),
                npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", four));
    expect_io_error([&] { load_npy(path("f8.npy")); }, {path("f8.npy"), "'<f8'"});
    write_bytes(path("be.npy"),
                npy_bytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", four));
    expect_io_error([&] { load_npy(path("be.npy")); }, {path("be.npy"), "'>f4'"});

    write_bytes(path("fortran.npy"),
                npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four));
    expect_io_error([&] { load_npy(path("fortran.npy")); }, {path("fortran.npy"), "fortran_order"});

    write_bytes(path("noshape.npy"),
                npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, }", four));
    expect_io_error([&] { load_npy(path("noshape.npy")); }, {path("noshape.npy"), "'shape'"});
    write_bytes(path("header.npy"), npy_bytes(1, "not a dict", four));
    expect_io_error([&] { load_npy(path("header.npy")); }, {path("header.npy"), "header"});
    write_bytes(path("short_header.npy"), npy_bytes(1, ok, four).substr(0, 40));
    expect_io_error([&] { load_npy(path("short_header.npy")); },
                    {path("short_header.npy"), "truncated header"});

    b = npy_bytes(1, ok, four);
    write_bytes(path("truncated.npy"), b.substr(0, b.size() - 3));
    expect_io_error([&] { load_npy(path("truncated.npy")); },
                    {path("truncated.npy"), "truncated data", "(2, 2)"});
    write_bytes(path("extra.npy"), b + "xyzw");
    expect_io_error([&] { load_npy(path("extra.npy")); }, {path("extra.npy"), "past"});

    write_bytes(path("shape.npy"), b);
    EXPECT_NO_THROW(load_npy_expect(path("shape.npy"), {2, 2}));
    expect_io_error([&] { load_npy_expect(path("shape.npy"), {4}); },
                    {path("shape.npy"), "(2, 2)", "(4,)"});
    expect_io_error(
        [&] {
            load_npy_expect(path("shape.npy"), {2, 2, 1});
        },
        {"(2, 2)", "(2, 2, 1)"});
}

// ---------------------------------------------------------------- weights and labels

TEST_F(IoTest, WeightStore) {
    const std::vector<float> w = deterministic_weights("features.0", {4, 3, 3, 3});
    const std::vector<float> b = deterministic_bias("features.0", 4);
    save_npy(path("features.0.weight.npy"), {4, 3, 3, 3}, w);
    save_npy(path("features.0.bias.npy"), {4}, b);
    save_npy(path("fc.weight.npy"), {10, 20}, std::vector<float>(200, 0.5f));

    const WeightStore store(dir_.string() + "/");
    EXPECT_EQ(store.weight_path("fc"), dir_.string() + "/fc.weight.npy");
    EXPECT_TRUE(store.has("features.0"));
    EXPECT_FALSE(store.has("fc")); // no bias file
    EXPECT_EQ(store.weight("features.0", {4, 3, 3, 3}), w);
    EXPECT_EQ(store.bias("features.0", 4), b);
    EXPECT_EQ(store.weight("fc", {10, 20}).size(), 200u);

    expect_io_error([&] { store.bias("fc", 10); },
                    {"layer 'fc'", "missing bias", store.bias_path("fc")});
    expect_io_error(
        [&] {
            store.weight("conv9", {1, 1, 1, 1});
        },
        {"layer 'conv9'", store.weight_path("conv9")});
    expect_io_error(
        [&] {
            store.weight("fc", {20, 10});
        },
        {"layer 'fc'", store.weight_path("fc"), "(10, 20)", "(20, 10)"});
}

TEST(DeterministicWeights, ReproducibleBoundedAndPerLayer) {
    const std::vector<int64_t> shape = {64, 32, 3, 3};
    const std::vector<float> a = deterministic_weights("conv1", shape, 7);
    EXPECT_EQ(a, deterministic_weights("conv1", shape, 7));
    EXPECT_NE(a, deterministic_weights("conv2", shape, 7));
    EXPECT_NE(a, deterministic_weights("conv1", shape, 8));
    ASSERT_EQ(a.size(), 64u * 32 * 9);
    const double limit = std::sqrt(6.0 / (32 * 9));
    double sum = 0, sq = 0, mx = 0;
    for (float v : a) {
        sum += v;
        sq += double(v) * v;
        mx = std::max(mx, std::fabs(double(v)));
    }
    EXPECT_LE(mx, limit);
    EXPECT_GT(mx, 0.9 * limit);
    EXPECT_NEAR(sum / a.size(), 0, 0.05 * limit);
    EXPECT_NEAR(sq / a.size(), limit * limit / 3, 0.1 * limit * limit / 3); // uniform variance

    const std::vector<float> fc = deterministic_weights("fc", {10, 4096});
    for (float v : fc)
        ASSERT_LE(std::fabs(v), std::sqrt(6.0 / 4096));
    const std::vector<float> bias = deterministic_bias("conv1", 64, 7);
    ASSERT_EQ(bias.size(), 64u);
    for (float v : bias)
        ASSERT_LE(std::fabs(v), 0.01f);
    EXPECT_NE(bias, std::vector<float>(a.begin(), a.begin() + 64));
    EXPECT_THROW(deterministic_weights("x", {}), std::invalid_argument);
}

TEST_F(IoTest, Labels) {
    write_bytes(path("labels.txt"), "tench\r\ngoldfish\r\ngreat white shark");
    EXPECT_EQ(load_labels(path("labels.txt")),
              (std::vector<std::string>{"tench", "goldfish", "great white shark"}));
    write_bytes(path("labels2.txt"), "a\nb\n");
    EXPECT_EQ(load_labels(path("labels2.txt")), (std::vector<std::string>{"a", "b"}));
    expect_io_error([&] { load_labels(path("none.txt")); }, {path("none.txt")});

    const std::vector<std::string> imagenet = load_labels(IMAGENET_CLASSES);
    ASSERT_EQ(imagenet.size(), 1000u);
    EXPECT_EQ(imagenet[0], "tench");
    EXPECT_EQ(imagenet[207], "golden retriever");
    EXPECT_EQ(imagenet[999], "toilet tissue");
}

// ---------------------------------------------------------------- inputs that cannot hurt us

namespace {

/** Address-space limit of the children below: far less than what the bad inputs claim, so
 * that an allocation of the claimed size fails instead of succeeding slowly. ASan reserves
 * terabytes of address space, so its builds run without the limit (and still check time). */
constexpr rlim_t kChildAddressSpace = rlim_t(512) << 20;

bool under_asan() {
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    return false;
}

/** In a child process (gtest's death-test fork) under kChildAddressSpace of address space
 * (more than the test's own use), runs f, which must throw an IoError containing every one
 * of parts within \p seconds: exit code 0 if so, 1 with the reason on stderr otherwise. */
template <typename F>
void expect_fast_io_error_limited(F f, std::initializer_list<std::string> parts,
                                  double seconds = 2.0) {
    EXPECT_EXIT(
        {
            if (!under_asan()) {
                rlimit lim;
                lim.rlim_cur = lim.rlim_max = kChildAddressSpace + (rlim_t(256) << 20);
                ::setrlimit(RLIMIT_AS, &lim);
            }
            const auto t0 = std::chrono::steady_clock::now();
            try {
                f();
                std::fprintf(stderr, "no IoError thrown\n");
            } catch (const IoError &e) {
                const double s =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                const std::string msg = e.what();
                bool ok = s <= seconds;
                if (!ok)
                    std::fprintf(stderr, "took %.2f s\n", s);
                for (const auto &p : parts) {
                    if (msg.find(p) == std::string::npos) {
                        std::fprintf(stderr, "'%s' not in: %s\n", p.c_str(), msg.c_str());
                        ok = false;
                    }
                }
                std::exit(ok ? 0 : 1);
            } catch (const std::exception &e) {
                std::fprintf(stderr, "not an IoError: %s\n", e.what());
            }
            std::exit(1);
        },
        ::testing::ExitedWithCode(0), "");
}

/** The PNG \p bytes with its IHDR's height replaced by \p height (and the chunk's CRC
 * fixed): a well-formed header claiming more rows than the file holds. */
std::string with_png_height(std::string bytes, uint32_t height) {
    // Signature (8), IHDR length (4), "IHDR" (4), width (4), height (4), 5 more bytes, CRC.
    for (int k = 0; k < 4; k++)
        bytes[20 + k] = char((height >> (24 - 8 * k)) & 0xff);
    const uLong crc = crc32(0, reinterpret_cast<const Bytef *>(bytes.data() + 12), 17);
    for (int k = 0; k < 4; k++)
        bytes[29 + k] = char((crc >> (24 - 8 * k)) & 0xff);
    return bytes;
}

} // namespace

TEST_F(IoTest, PngDimensionsCheckedBeforeAllocating) {
    // The file: a small, valid PNG of 100000 x 1 black pixels (it took 25 s and
    // 1.6 GB in the resize). Over the side limit: refused from its header.
    const std::string wide = path("wide.png");
    ASSERT_TRUE(write_png(wide, {100000, 1, PNG_COLOR_TYPE_RGB, 8},
                          {std::vector<unsigned char>(300000, 0)}));
    EXPECT_LT(fs::file_size(wide), 2000u);
    expect_fast_io_error_limited([&] { load_png_rgb(wide); },
                                 {wide + ": ", "100000 x 1", "larger than accepted"});
    // Within the limits (8000 x 8000 = 64 M pixels, 192 MB of RGB) but only one row in the
    // file: refused from the file size before the 192 MB are allocated.
    const std::string head = path("head_only.png");
    ASSERT_TRUE(write_png(path("row.png"), {8000, 1, PNG_COLOR_TYPE_RGB, 8},
                          {std::vector<unsigned char>(24000, 0)}));
    write_bytes(head, with_png_height(read_bytes(path("row.png")), 8000));
    EXPECT_LT(fs::file_size(head), 1000u);
    expect_fast_io_error_limited([&] { load_png_rgb(head); },
                                 {head + ": ", "8000 x 8000", "can hold"});
}

TEST_F(IoTest, ThinImagesPreprocessOnlyTheCrop) {
    // 16384 x 1 is accepted; resizing its short side to 256 makes it 4194304 wide, of which
    // only the 224 cropped columns are computed (memory of the crop, not of the resize).
    RgbImage img;
    img.width = kMaxImageSide;
    img.height = 1;
    img.data.assign(size_t(img.width) * 3, 128);
    EXPECT_EXIT(
        {
            if (!under_asan()) {
                rlimit lim;
                lim.rlim_cur = lim.rlim_max = kChildAddressSpace + (rlim_t(256) << 20);
                ::setrlimit(RLIMIT_AS, &lim);
            }
            const std::vector<float> x = preprocess_imagenet(img, 224);
            const float expect = (128 / 255.0f - kImagenetMean[0]) / kImagenetStd[0];
            std::exit(x.size() == 3u * 224 * 224 && std::fabs(x[0] - expect) < 1e-4f ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

TEST_F(IoTest, NpyShapeCheckedAgainstTheFileSize) {
    // 1 KB whose header claims 3 GB (750 M floats): an error naming the file at once,
    // under an address-space limit the allocation would exceed.
    std::string b =
        npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (750000000,), }",
                  std::vector<float>(230, 1.0f));
    write_bytes(path("claims_3gb.npy"), b);
    EXPECT_LE(b.size(), 1100u);
    expect_fast_io_error_limited(
        [&] { load_npy(path("claims_3gb.npy")); },
        {path("claims_3gb.npy"), "truncated data", "3000000000 bytes", "the file has 920"});
}

TEST_F(IoTest, NonFiniteValuesRefusedUnlessAllowed) {
    const float nan = std::nanf(""), inf = INFINITY;
    save_npy(path("nan.npy"), {2, 3}, {0, 1, 2, 3, nan, 5});
    expect_io_error([&] { load_npy(path("nan.npy")); },
                    {path("nan.npy"), "(1, 1)", "flat index 4", "NaN"});
    const NpyArray a = load_npy(path("nan.npy"), NonFinite::Allow);
    EXPECT_TRUE(std::isnan(a.data[4]));
    save_npy(path("inf.npy"), {3}, {0, -inf, inf});
    expect_io_error([&] { load_npy_expect(path("inf.npy"), {3}); },
                    {path("inf.npy"), "(1,)", "-inf"});
    EXPECT_NO_THROW(load_npy_expect(path("inf.npy"), {3}, NonFinite::Allow));

    // Weight files: the error names the layer, the file and the element.
    save_npy(path("fc.weight.npy"), {2, 2}, {1, 2, nan, 4});
    save_npy(path("fc.bias.npy"), {2}, {0, 0});
    const WeightStore store(dir_.string());
    expect_io_error(
        [&] {
            store.weight("fc", {2, 2});
        },
        {"layer 'fc'", store.weight_path("fc"), "(1, 0)", "NaN"});
    const WeightStore lenient(dir_.string(), NonFinite::Allow);
    EXPECT_TRUE(std::isnan(lenient.weight("fc", {2, 2})[2]));
}

TEST_F(IoTest, OutputFileOpenedAndCheckedBeforeTheRun) {
    // Writable: written only once close() returns.
    OutputFile out(path("report.json"));
    out.write("{}\n");
    out.close();
    EXPECT_EQ(read_bytes(path("report.json")), "{}\n");
    EXPECT_NO_THROW(check_writable(path("report.json")));
    EXPECT_EQ(read_bytes(path("report.json")), "{}\n"); // check_writable changes nothing
    EXPECT_NO_THROW(check_writable(path("new.json")));
    EXPECT_FALSE(fs::exists(path("new.json"))); // nor leaves a file behind
    EXPECT_NO_THROW(OutputFile("/dev/null").close());

    // Unwritable: a missing directory, a directory, a full device; each error names the path.
    const std::string missing = path("no_dir/trace.json");
    expect_io_error([&] { OutputFile o(missing); }, {missing + ": cannot write", "No such file"});
    expect_io_error([&] { check_writable(missing); }, {missing + ": cannot write", "No such file"});
    expect_io_error([&] { OutputFile o(dir_.string()); },
                    {dir_.string() + ": cannot write", "directory"});
    expect_io_error([&] { check_writable(dir_.string()); }, {dir_.string(), "directory"});
    if (fs::exists("/dev/full")) {
        expect_io_error([&] { OutputFile o("/dev/full"); },
                        {"/dev/full: cannot write", "No space left"});
        expect_io_error([&] { check_writable("/dev/full"); },
                        {"/dev/full: cannot write", "No space left"});
        expect_io_error([&] { save_npy("/dev/full", {1}, {1}); }, {"/dev/full", "No space left"});
    }
    if (::geteuid() != 0) { // root writes anywhere
        fs::create_directories(path("ro"));
        fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
        expect_io_error([&] { check_writable(path("ro/x.csv")); },
                        {path("ro/x.csv"), "Permission denied"});
    }
}

TEST_F(IoTest, OutputFileReportsWriteErrorsAtClose) {
    // A file size limit of 1000 bytes: the 5000 bytes sit in stdio's buffer until close(),
    // whose flush fails; close() must say so, naming the path ("written" would be a lie).
    const std::string p = path("big.csv");
    EXPECT_EXIT(
        {
            std::signal(SIGXFSZ, SIG_IGN);
            rlimit lim;
            lim.rlim_cur = lim.rlim_max = 1000;
            ::setrlimit(RLIMIT_FSIZE, &lim);
            try {
                OutputFile out(p);
                out.write(std::string(5000, 'x'));
                out.close();
            } catch (const IoError &e) {
                const std::string msg = e.what();
                std::exit(msg.find(p + ": write failed") != std::string::npos ? 0 : 2);
            }
            std::exit(1);
        },
        ::testing::ExitedWithCode(0), "");
}
