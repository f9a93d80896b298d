/** \file
 * sw_net on bad input: a missing, truncated or non-PNG image, weight files of the wrong
 * shape or dtype, a missing weight file, a bad --batch or --schedule: one clear message and
 * a non-zero exit, never a crash. Also one good run: --schedule auto (the autoscheduled
 * AlexNet).
 */
#include "apps/io/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

namespace {

namespace fs = std::filesystem;

struct Result {
    int exit_code;
    std::string output;
};

Result run_app(const std::string &args) {
    std::string out;
    FILE *p = popen((std::string(SW_NET_APP) + " --net alexnet " + args + " 2>&1").c_str(), "r");
    char buf[4096];
    while (p && fgets(buf, sizeof buf, p)) out += buf;
    const int status = p ? pclose(p) : -1;
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

class AppErrors : public testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("sw_net_errors_" + std::to_string(::getpid()));
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override { fs::remove_all(dir); }
    std::string file(const std::string &name, const std::string &bytes) {
        std::ofstream(dir / name, std::ios::binary) << bytes;
        return (dir / name).string();
    }
    static void expect_error(const Result &r, const std::string &needle) {
        EXPECT_EQ(r.exit_code, 1) << r.output;
        EXPECT_NE(r.output.find("error: "), std::string::npos) << r.output;
        EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
    }
};

TEST_F(AppErrors, MissingImage) { expect_error(run_app("--image /nonexistent/x.png"), "/nonexistent/x.png"); }

TEST_F(AppErrors, NotAPng) { expect_error(run_app("--image " + file("text.png", "hello, not a picture")), "text.png"); }

TEST_F(AppErrors, TruncatedPng) {
    std::ifstream in(SW_SAMPLE_IMAGE, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 1000u);
    expect_error(run_app("--image " + file("cut.png", bytes.substr(0, bytes.size() / 2))), "cut.png");
}

TEST_F(AppErrors, BatchZero) { expect_error(run_app("--batch 0"), "--batch must be at least 1"); }

TEST_F(AppErrors, BatchNotANumber) { expect_error(run_app("--batch two"), "whole number"); }

TEST_F(AppErrors, MissingWeightFile) {
    expect_error(run_app("--weights " + dir.string()), "conv1");
}

TEST_F(AppErrors, WeightOfTheWrongShape) {
    sw_io::save_npy((dir / "conv1.weight.npy").string(), {96, 3, 11, 10}, std::vector<float>(96 * 3 * 11 * 10));
    sw_io::save_npy((dir / "conv1.bias.npy").string(), {96}, std::vector<float>(96));
    expect_error(run_app("--weights " + dir.string()), "(96, 3, 11, 11)");
}

TEST_F(AppErrors, WeightOfTheWrongDtype) {
    // A valid .npy header for float64 data.
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (96,), }";
    header.append(128 - 10 - header.size() - 1, ' ');  // 10-byte preamble + header = 128
    header += '\n';
    std::string npy = std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) + char(header.size() >> 8) + header;
    npy.append(96 * 8, '\0');
    sw_io::save_npy((dir / "conv1.weight.npy").string(), {96, 3, 11, 11}, std::vector<float>(96 * 3 * 11 * 11));
    file("conv1.bias.npy", npy);
    expect_error(run_app("--weights " + dir.string()), "<f8");
}

TEST_F(AppErrors, InputTensorOfTheWrongShape) {
    sw_io::save_npy((dir / "x.npy").string(), {1, 3, 224, 224}, std::vector<float>(3 * 224 * 224));
    expect_error(run_app("--input " + (dir / "x.npy").string()), "(1, 3, 227, 227)");
}

TEST_F(AppErrors, UnknownOption) { expect_error(run_app("--frobnicate"), "unknown argument '--frobnicate'"); }

TEST_F(AppErrors, UnknownSchedule) {
    expect_error(run_app("--schedule fast"), "--schedule must be hand, baseline or auto, not 'fast'");
}

// Not an error: the autoscheduled AlexNet runs and says so (no baseline with --no-compare).
TEST_F(AppErrors, AutoscheduledRuns) {
    const Result r = run_app("--schedule auto --no-compare --top 1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("autoscheduled"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("speedup"), std::string::npos) << r.output;
}

}  // namespace
