/** \file
 * Command-line parsing shared by the tools (autoschedule, conv2d_demo, sw_bench): CLI11
 * (Debian libcli11-dev) with one behaviour everywhere: --help prints the options and exits
 * 0; a bad, missing or unexpected option prints "error: <what>" on stderr (and where
 * --help is) and exits 1.
 */
#ifndef APPS_CLI_SUPPORT_H
#define APPS_CLI_SUPPORT_H

#include <CLI/CLI.hpp>

#include <iostream>

namespace sw_cli {

/** Parses argv into \p app. Returns -1 when the tool should go on, else its exit status. */
inline int parse(CLI::App &app, int argc, char **argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        std::cerr << "error: " << e.what() << "\n(" << app.get_name()
                  << " --help lists the options)\n";
        return 1;
    }
    return -1;
}

} // namespace sw_cli

#endif
