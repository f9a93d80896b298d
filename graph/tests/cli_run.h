/** \file
 * A command run through the shell, for the tests of the command-line tools (sw_net,
 * sw_graph_inspect, an exported bundle's make and program): its exit status and its output.
 */
#ifndef SW_GRAPH_TESTS_CLI_RUN_H
#define SW_GRAPH_TESTS_CLI_RUN_H

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace sw_graph_test {

struct CliRun {
    int status = -1; ///< the exit status; -1 if the command did not run or did not exit
    std::string out; ///< stdout and stderr together
};

/** Runs \p command through the shell, stdout and stderr together. */
inline CliRun run_shell(const std::string &command) {
    CliRun r;
    FILE *p = popen((command + " 2>&1").c_str(), "r");
    if (!p)
        return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        r.out.append(buf, n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

} // namespace sw_graph_test

#endif
