/** \file
 * The one exception type of sw_io: every failure to read or write a file (missing file,
 * wrong format, truncated data, a shape other than the caller expects) throws IoError
 * with a message that names the file and says what is wrong.
 */
#ifndef SW_IO_IO_ERROR_H
#define SW_IO_IO_ERROR_H

#include <stdexcept>
#include <string>

namespace sw_io {

class IoError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace sw_io

#endif
