#include "weights.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <sys/stat.h>

namespace sw_io {

namespace {

bool file_exists(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/** FNV-1a, 64 bits: a hash that is the same everywhere (unlike std::hash). */
uint64_t fnv1a(const std::string &s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

} // namespace

WeightStore::WeightStore(std::string dir, NonFinite nonfinite)
    : dir_(std::move(dir)), nonfinite_(nonfinite) {
    while (dir_.size() > 1 && dir_.back() == '/')
        dir_.pop_back();
}

std::string WeightStore::weight_path(const std::string &layer) const {
    return dir_ + "/" + layer + ".weight.npy";
}
std::string WeightStore::bias_path(const std::string &layer) const {
    return dir_ + "/" + layer + ".bias.npy";
}

bool WeightStore::has(const std::string &layer) const {
    return file_exists(weight_path(layer)) && file_exists(bias_path(layer));
}

std::vector<float> WeightStore::load(const std::string &layer, const std::string &path,
                                     const char *what, const std::vector<int64_t> &shape) const {
    if (!file_exists(path))
        throw IoError("layer '" + layer + "': missing " + what + " file '" + path +
                      "' (expected shape " + shape_to_string(shape) + ")");
    try {
        return load_npy_expect(path, shape, nonfinite_).data;
    } catch (const IoError &e) {
        throw IoError("layer '" + layer + "' " + what + ": " + e.what());
    }
}

std::vector<float> WeightStore::weight(const std::string &layer,
                                       const std::vector<int64_t> &shape) const {
    return load(layer, weight_path(layer), "weight", shape);
}

std::vector<float> WeightStore::bias(const std::string &layer, int64_t out) const {
    return load(layer, bias_path(layer), "bias", {out});
}

std::vector<float> deterministic_weights(const std::string &layer,
                                         const std::vector<int64_t> &shape, uint64_t seed) {
    if (shape.empty())
        throw std::invalid_argument("deterministic_weights '" + layer + "': empty shape");
    size_t n = 1, fan_in = 1;
    for (size_t i = 0; i < shape.size(); i++) {
        if (shape[i] <= 0)
            throw std::invalid_argument("deterministic_weights '" + layer + "': bad shape " +
                                        shape_to_string(shape));
        n *= size_t(shape[i]);
        if (i > 0)
            fan_in *= size_t(shape[i]);
    }
    const bool is_bias = shape.size() == 1;
    const double limit = is_bias ? 0.01 : std::sqrt(6.0 / double(fan_in));
    std::mt19937_64 rng(
        splitmix64(fnv1a(layer + (is_bias ? ".bias" : ".weight")) ^ splitmix64(seed)));
    std::vector<float> v(n);
    for (float &x : v) {
        const double u = double(rng() >> 11) * (1.0 / 9007199254740992.0); // [0, 1), 53 bits
        x = float((2 * u - 1) * limit);
    }
    return v;
}

std::vector<float> deterministic_bias(const std::string &layer, int64_t out, uint64_t seed) {
    return deterministic_weights(layer, {out}, seed);
}

std::vector<std::string> load_labels(const std::string &path) {
    std::ifstream in(path);
    if (!in)
        throw IoError("cannot open labels file '" + path + "': " + std::strerror(errno));
    std::vector<std::string> labels;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        labels.push_back(line);
    }
    if (in.bad())
        throw IoError("error reading labels file '" + path + "'");
    return labels;
}

} // namespace sw_io
