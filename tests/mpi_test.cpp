/** \file
 * sw_net under `mpirun -np 2` (one rank per emulated core group, dist/Ranks.h): data parallel
 * AlexNet whose output equals the single-rank run's bit for bit, with an uneven batch (3
 * images over 2 ranks); more ranks than images (the extra rank idles, with a note); a rank
 * that fails on its own share of the input (a NaN in the image only rank 1 reads) ends the
 * whole job with that rank's message, never a hang; --fc-split (dense layers split by rows
 * over 3 ranks) equal to the unsplit run within float tolerance. (--model under mpirun:
 * graph/tests/sw_net_model_test.cpp.)
 * Oversubscribed, --allow-run-as-root (CI runs as root); each run is bounded by `timeout`.
 */
#include "runtime/io/npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Result {
    int exit_code;
    std::string output;
};

/** `ranks` > 0: mpirun -np ranks sw_net ARGS; 0: sw_net ARGS alone. At most 600 s: a first
 * run builds AlexNet's layers into the layer cache (the later runs load them). */
Result run(int ranks, const std::string &args) {
    std::string cmd = "timeout 600 ";
    if (ranks > 0)
        cmd += std::string(SW_MPIRUN) + " --allow-run-as-root --oversubscribe -np " +
               std::to_string(ranks) + " ";
    cmd += std::string(SW_NET_APP) + " " + args + " 2>&1";
    std::string out;
    FILE *p = popen(cmd.c_str(), "r");
    char buf[4096];
    while (p && fgets(buf, sizeof buf, p))
        out += buf;
    const int status = p ? pclose(p) : -1;
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

std::string bytes_of(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

class Mpi : public testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("sw_net_mpi_" + std::to_string(::getpid()));
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override { fs::remove_all(dir); }
};

TEST_F(Mpi, DataParallelEqualsOneRankBitForBit) {
    const std::string common = "--net alexnet --batch 3 --no-compare --top 2 --dump-output ";
    const Result one = run(0, common + (dir / "one.npy").string());
    ASSERT_EQ(one.exit_code, 0) << one.output;
    const Result two = run(2, common + (dir / "two.npy").string());
    ASSERT_EQ(two.exit_code, 0) << two.output;
    const std::string a = bytes_of(dir / "one.npy"), b = bytes_of(dir / "two.npy");
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a, b) << "the 2-rank output differs from the single rank's";
    // Printed once, by rank 0, in input order: the same top classes as one rank prints.
    auto images = [](const std::string &out) {
        std::string s;
        for (size_t at = out.find("\nimage "); at != std::string::npos;
             at = out.find("\nimage ", at + 1)) {
            s += out.substr(at, out.find("\n\n", at + 1) - at);
        }
        return s;
    };
    EXPECT_EQ(images(one.output), images(two.output));
    EXPECT_NE(two.output.find("image 2: top-2"), std::string::npos) << two.output;
    EXPECT_EQ(two.output.find("image 3:"), std::string::npos) << two.output;
    // Uneven: 2 images on rank 0, 1 on rank 1; the job's figures.
    EXPECT_NE(two.output.find("   0  node 0 cg 0       2"), std::string::npos) << two.output;
    EXPECT_NE(two.output.find("   1  node 0 cg 1       1"), std::string::npos) << two.output;
    EXPECT_NE(two.output.find("job: 2 rank(s) on 1 node(s), 3 image(s)"), std::string::npos)
        << two.output;
    EXPECT_NE(two.output.find("scaling efficiency 0.75"), std::string::npos) << two.output;
}

TEST_F(Mpi, MoreRanksThanImagesIdleWithANote) {
    const Result r = run(2, "--net alexnet --batch 1 --no-compare --top 1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("note: 2 ranks for 1 pass(es): ranks 1-1 idle"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("(idle)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("image 0: top-1"), std::string::npos) << r.output;
}

TEST_F(Mpi, AFailingRankEndsTheJobWithItsMessage) {
    // Two AlexNet images; a NaN in the second, which only rank 1 reads.
    const int64_t per_image = 3 * 227 * 227;
    std::vector<float> x(size_t(2 * per_image), 0.5f);
    x[size_t(per_image + 7)] = NAN;
    const std::string input = (dir / "x.npy").string();
    sw_io::save_npy(input, {2, 3, 227, 227}, x);
    const Result r = run(2, "--net alexnet --batch 2 --no-compare --input " + input);
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.exit_code, 124) << "the job hung (timeout)\n" << r.output;
    EXPECT_NE(r.output.find("error: rank 1 of 2: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(input), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("NaN"), std::string::npos) << r.output;
}

// --fc-split over 3 ranks (4096 and 1000 rows do not divide by 3): every rank runs the image,
// each dense layer's rows are split and allgathered; the probabilities equal the unsplit
// run's within float tolerance, and the latency line is printed.
TEST_F(Mpi, FcSplitMatchesOneRankWithinTolerance) {
    const std::string common = "--net alexnet --batch 1 --no-compare --top 1 --dump-output ";
    const Result one = run(0, common + (dir / "one.npy").string());
    ASSERT_EQ(one.exit_code, 0) << one.output;
    const Result three = run(3, "--fc-split " + common + (dir / "three.npy").string());
    ASSERT_EQ(three.exit_code, 0) << three.output;
    EXPECT_NE(three.output.find("fc8 rows 0-333 of 1000"), std::string::npos) << three.output;
    EXPECT_NE(three.output.find("fc-split over 3 core group(s): modelled "), std::string::npos)
        << three.output;
    const sw_io::NpyArray a = sw_io::load_npy((dir / "one.npy").string());
    const sw_io::NpyArray b = sw_io::load_npy((dir / "three.npy").string());
    ASSERT_EQ(a.shape, b.shape);
    for (size_t i = 0; i < a.data.size(); i++) {
        EXPECT_NEAR(a.data[i], b.data[i], 1e-6 + 1e-5 * std::fabs(a.data[i])) << i;
    }
    const Result bad = run(2, "--fc-split --net alexnet"); // the baseline comparison is not split
    EXPECT_EQ(bad.exit_code, 1) << bad.output;
    EXPECT_NE(bad.output.find("--fc-split: add --no-compare"), std::string::npos) << bad.output;
}

} // namespace
