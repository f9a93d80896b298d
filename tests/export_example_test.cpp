/** \file
 * The export bundle as a TaihuLight user gets it (add_sw_export), checked the way its
 * README.md says to use it on this machine:
 *  - the example program (main.c + every <fn>.example.c) builds with gcc against the athread
 *    emulator with the README's `make app HOSTCC=gcc ...` line and runs: exit status 0, and
 *    the printed checksums of the conv2d functions equal those of the naive loop nest of
 *    reference/naive_layers.h on the documented input values;
 *  - the generated header documents every argument: shape (C array and Halide dims),
 *    strides, type, the machine, and declares the plain-float entry point;
 *  - a bundle of a function built for sw26010-pro runs on the emulator (default machine
 *    sw26010) without any athread_emu_set_machine in the program, with a kernel that needs
 *    more LDM than an sw26010 CPE has.
 */
#include "reference/naive_layers.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

int run(const std::string &cmd, std::string *out) {
    FILE *p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p)
        return -1;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        out->append(buf, n);
    const int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read(const std::string &path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

/** The README's command for building the example with gcc against the emulator. */
std::string readme_build_command(const std::string &readme) {
    const size_t at = readme.find("make app HOSTCC=");
    if (at == std::string::npos)
        return "";
    // Up to the first line that does not continue with a backslash.
    std::string cmd;
    for (size_t i = at; i < readme.size() && !(readme[i] == '\n' && readme[i - 1] != '\\'); i++)
        cmd += readme[i];
    return cmd;
}

/** Copies the bundle to a scratch directory, builds the example as its README says, runs it. */
struct ExampleRun {
    int build_status = -1, run_status = -1;
    std::string build_log, output;
    std::map<std::string, std::pair<double, double>> checksums; ///< function -> (sum, weighted)

    explicit ExampleRun(const std::string &bundle, const std::string &work) {
        std::string ignored;
        run("rm -rf '" + work + "' && mkdir -p '" + work + "' && cp -r '" + bundle + "'/. '" +
                work + "'",
            &ignored);
        const std::string cmd = readme_build_command(read(work + "/README.md"));
        if (cmd.empty())
            return;
        build_status = run("cd '" + work + "' && " + cmd, &build_log);
        if (build_status != 0)
            return;
        run_status = run("cd '" + work + "' && ./app", &output);
        const std::regex line(R"((\w+) output checksum (\S+) weighted (\S+))");
        for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) {
            checksums[(*it)[1]] = {std::stod((*it)[2]), std::stod((*it)[3])};
        }
    }
};

/** The example's input values: element i of the k-th input buffer. */
std::vector<float> example_input(size_t n, int k) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((int)((i * 7 + k * 3) % 19) - 9) / 32.0f;
    return v;
}

/** Checksums of the naive conv2d on the example's inputs (input k=0, weights 1, bias 2). */
std::pair<double, double> naive_checksums(const reference::Conv2DParams &p) {
    const std::vector<float> in = example_input(size_t(p.batch) * p.in_c * p.h * p.w, 0);
    const std::vector<float> wt =
        example_input(size_t(p.out_c) * p.in_c * p.kernel_x * p.kernel_y, 1);
    const std::vector<float> bias = example_input(size_t(p.out_c), 2);
    const std::vector<float> out = reference::conv2d(p, in, wt, bias);
    double sum = 0, weighted = 0;
    for (size_t i = 0; i < out.size(); i++) {
        sum += out[i];
        weighted += out[i] * (double)(1 + i % 7);
    }
    return {sum, weighted};
}

void expect_checksums(const ExampleRun &r, const std::string &fn,
                      const reference::Conv2DParams &p) {
    ASSERT_TRUE(r.checksums.count(fn)) << r.output;
    const auto want = naive_checksums(p);
    const auto got = r.checksums.at(fn);
    EXPECT_NEAR(got.first, want.first, 1e-4 * (1 + std::abs(want.first))) << fn;
    EXPECT_NEAR(got.second, want.second, 1e-4 * (1 + std::abs(want.second))) << fn;
}

/** "LDM per CPE: <peak> of <budget> bytes" of a report: (peak, budget). */
std::pair<long, long> ldm_use(const std::string &report) {
    std::smatch m;
    if (!std::regex_search(report, m, std::regex(R"(LDM per CPE: (\d+) of (\d+) bytes)")))
        return {-1, -1};
    return {std::stol(m[1]), std::stol(m[2])};
}

TEST(ExportExample, ReadmeHasEverySection) {
    const std::string readme = read(std::string(BUNDLE) + "/README.md");
    for (const char *needle : {"## Files", "sw5cc -host", "bsub -b -I", "athread_halt()",
                               "athread_init()", "make app HOSTCC=gcc", "-DATHREAD_EMULATOR",
                               "`<fn>.example.c`", "| `conv_small_sw` | sw26010 |"}) {
        EXPECT_NE(readme.find(needle), std::string::npos) << needle << "\n" << readme;
    }
    const std::string main_c = read(std::string(BUNDLE) + "/main.c");
    EXPECT_NE(main_c.find("athread_halt();"), std::string::npos) << main_c;
    EXPECT_EQ(main_c.find("athread_emu"), std::string::npos) << "main.c must be real-machine code\n"
                                                             << main_c;
}

TEST(ExportExample, BuildsWithGccAgainstTheEmulatorAndMatchesNaiveLoops) {
    const ExampleRun r(BUNDLE, std::string(WORK) + "/sw26010");
    ASSERT_EQ(r.build_status, 0) << r.build_log;
    ASSERT_EQ(r.run_status, 0) << r.output;
    EXPECT_NE(r.output.find("all calls succeeded"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("conv_small_sw ran on the emulated sw26010\n"), std::string::npos)
        << r.output;
    // The shapes of tests/CMakeLists.txt's add_conv_case(small ...) and (odd ...).
    expect_checksums(r, "conv_small_sw",
                     reference::Conv2DParams::square(1, 3, 8, 16, 16, 3, 1, 1, true));
    expect_checksums(r, "conv_odd_sw",
                     reference::Conv2DParams::square(2, 5, 7, 13, 11, 3, 2, 1, false));
    // The other functions of the bundle ran and printed a checksum too.
    EXPECT_TRUE(r.checksums.count("alexnet_small_norm1_sunway")) << r.output;
    EXPECT_TRUE(r.checksums.count("alexnet_small_fc6_sunway")) << r.output;
}

TEST(ExportExample, HeaderDocumentsShapesLayoutAndMachine) {
    const std::string h = read(std::string(BUNDLE) + "/conv_small_sw.h");
    for (const char *needle :
         {"generated by the Sunway target for sw26010 (64 CPEs per core group",
          "input: input, float32, C array [1][3][16][16], 768 elements (3072 bytes), dense",
          "weights: input, float32, C array [8][3][3][3], 216 elements",
          "bias: input, float32, C array [8], 8 elements",
          "output: output, float32, C array [1][8][16][16], 2048 elements",
          "dim 0: min 0, extent 16, stride 1\n", "dim 1: min 0, extent 16, stride 16\n",
          "dim 2: min 0, extent 3, stride 256\n", "dim 3: min 0, extent 1, stride 768\n",
          "athread_halt()", "#define CONV_SMALL_SW_INPUT_ELEMENTS 768L",
          "#define CONV_SMALL_SW_MACHINE \"sw26010\"",
          "int conv_small_sw(struct halide_buffer_t *input, struct halide_buffer_t *weights, "
          "struct halide_buffer_t *bias, struct halide_buffer_t *output);",
          "int conv_small_sw_f32(const float *input, const float *weights, const float *bias, "
          "float *output);"}) {
        EXPECT_NE(h.find(needle), std::string::npos) << needle << "\n" << h;
    }
}

TEST(ExportExample, Sw26010ProBuildRunsOnTheDefaultEmulator) {
    // The kernel needs more LDM than an SW26010 CPE has: it can only run as sw26010-pro.
    const auto pro = ldm_use(read(std::string(PRO_BUNDLE) + "/conv_pro_sw.sw_report.txt"));
    const auto classic = ldm_use(read(std::string(BUNDLE) + "/conv_small_sw.sw_report.txt"));
    ASSERT_GT(classic.second, 0);
    EXPECT_GT(pro.first, classic.second) << "the sw26010-pro kernel fits an SW26010 CPE's LDM";
    const std::string main_c = read(std::string(PRO_BUNDLE) + "/main.c");
    EXPECT_EQ(main_c.find("athread_emu_set_machine"), std::string::npos);
    const ExampleRun r(PRO_BUNDLE, std::string(WORK) + "/pro");
    ASSERT_EQ(r.build_status, 0) << r.build_log;
    ASSERT_EQ(r.run_status, 0) << r.output;
    EXPECT_NE(r.output.find("conv_pro_sw ran on the emulated sw26010-pro\n"), std::string::npos)
        << r.output;
    expect_checksums(r, "conv_pro_sw",
                     reference::Conv2DParams::square(1, 64, 64, 28, 28, 3, 1, 1, true));
    const std::string readme = read(std::string(PRO_BUNDLE) + "/README.md");
    EXPECT_NE(readme.find("| `conv_pro_sw` | sw26010-pro |"), std::string::npos) << readme;
}

} // namespace
