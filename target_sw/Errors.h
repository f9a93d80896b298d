/** \file
 * The error a user can cause (bad parameters, a schedule that does not fit the LDM, ...),
 * reported by the driver as one clear message and a non-zero exit.
 */
#ifndef SW_ERRORS_H
#define SW_ERRORS_H

#include <stdexcept>
#include <string>

namespace sw {

struct UserError : std::runtime_error {
    explicit UserError(const std::string &message) : std::runtime_error(message) {}
};

/** A Halide error's text without Halide's own "Error: " / "Error:\n" prefix and trailing
 * newlines, so that the driver prints "error: <what>", not "error: Error: <what>". */
inline std::string without_error_prefix(std::string text) {
    for (const char *prefix : {"Error: ", "Error:\n", "Error:"}) {
        const std::string p = prefix;
        if (text.compare(0, p.size(), p) == 0) {
            text.erase(0, p.size());
            break;
        }
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

} // namespace sw

#endif
