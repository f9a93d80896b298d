/** \file
 * sw::find_tool (runtime/locate.h): the tools of this build found from a test executable in
 * <build>/tests, the environment overrides, and the error when nothing is there.
 */
#include "runtime/locate.h"
#include "target_sw/Errors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

/** Sets an environment variable for the scope, restoring the old value. */
struct ScopedEnv {
    ScopedEnv(const char *name, const std::string &value) : name_(name) {
        if (const char *old = std::getenv(name))
            had_ = true, old_ = old;
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (had_)
            setenv(name_, old_.c_str(), 1);
        else
            unsetenv(name_);
    }
    const char *name_;
    bool had_ = false;
    std::string old_;
};

} // namespace

TEST(Locate, FindsThisBuildsTools) {
    // As built (tests/CMakeLists.txt passes the targets' paths only to compare).
    EXPECT_TRUE(fs::equivalent(sw::find_tool(sw::kLayersGenerator), SW_EXPECT_GENERATOR));
    EXPECT_TRUE(fs::equivalent(sw::find_tool(sw::kAutoschedulePlugin), SW_EXPECT_PLUGIN));
    EXPECT_TRUE(fs::equivalent(sw::find_tool(sw::kEmulatorLibrary), SW_EXPECT_EMULATOR_LIB));
    const std::string inc = sw::find_tool(sw::kEmulatorInclude);
    for (const char *h : {"athread.h", "slave.h", "simd.h", "athread_emu.h"}) {
        EXPECT_TRUE(fs::is_regular_file(fs::path(inc) / h)) << inc << " has no " << h;
    }
}

TEST(Locate, EnvironmentOverrides) {
    const fs::path self = fs::read_symlink("/proc/self/exe");
    ScopedEnv env("SW_LAYERS_GENERATOR", self.string());
    EXPECT_EQ(sw::find_tool(sw::kLayersGenerator), self.string());
    ScopedEnv inc("SW_EMULATOR_INCLUDE", self.parent_path().string()); // no athread.h there
    try {
        sw::find_tool(sw::kEmulatorInclude);
        FAIL() << "expected an error";
    } catch (const sw::UserError &e) {
        EXPECT_NE(std::string(e.what()).find("SW_EMULATOR_INCLUDE=" + self.parent_path().string()),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(sw::find_tool_or_empty(sw::kEmulatorInclude), "");
}

TEST(Locate, MissingToolSaysWhereItLooked) {
    ScopedEnv env("SW_AUTOSCHEDULE_CLI", "/nonexistent/autoschedule");
    try {
        sw::find_tool(sw::kAutoscheduleCli);
        FAIL() << "expected an error";
    } catch (const sw::UserError &e) {
        const std::string what = e.what();
        EXPECT_NE(
            what.find("cannot find the autoschedule CLI (autoschedule): set SW_AUTOSCHEDULE_CLI"),
            std::string::npos)
            << what;
        EXPECT_NE(what.find("/nonexistent/autoschedule"), std::string::npos) << what;
    }
    EXPECT_THROW(sw::find_tool("no such tool"), sw::UserError);
    EXPECT_EQ(sw::tool_variable(sw::kLayersGenerator), "SW_LAYERS_GENERATOR");
}
