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

}  // namespace sw

#endif
