/** \file
 * Output files that fail early and loudly: opened and checked before a long run, every
 * write and the final close checked, each error naming the path.
 */
#ifndef SW_IO_OUTPUT_FILE_H
#define SW_IO_OUTPUT_FILE_H

#include "io_error.h"

#include <cstddef>
#include <cstdio>
#include <string>

namespace sw_io {

/** An output file, created (or truncated) and checked when constructed, so that a program
 * can open its outputs before a long run and fail at once on an unwritable path:
 * - the constructor throws IoError "PATH: cannot write: REASON" if the file cannot be
 *   opened for writing (missing or unwritable directory, a directory, no permission) or if
 *   a probe write fails: a character device other than a terminal (e.g. /dev/full) gets one
 *   byte written and flushed at once; regular files, pipes and terminals get no probe;
 * - write() throws IoError "PATH: write failed: REASON";
 * - close() flushes and closes, and throws IoError if anything written was lost (a full
 *   disk, /dev/full): only after close() returns is the file written.
 * The destructor closes a file not closed yet and ignores errors (an exception unwinding). */
class OutputFile {
public:
    explicit OutputFile(std::string path);
    ~OutputFile();
    OutputFile(OutputFile &&other) noexcept;
    OutputFile &operator=(OutputFile &&other) noexcept;
    OutputFile(const OutputFile &) = delete;
    OutputFile &operator=(const OutputFile &) = delete;

    const std::string &path() const { return path_; }
    bool is_open() const { return file_ != nullptr; }

    void write(const void *data, size_t bytes);
    void write(const std::string &text) { write(text.data(), text.size()); }
    /** Flushes and closes; throws IoError naming the path if any write failed. */
    void close();

private:
    [[noreturn]] void fail(const std::string &what, int err);
    std::string path_;
    FILE *file_ = nullptr;
};

/** Checks, without changing anything, that \p path can be written as an output later:
 * its directory exists and is writable, the path is not a directory, an existing file is
 * writable, and a character device other than a terminal takes a probe byte (/dev/full
 * does not). A file that did not exist is created and removed again. Throws IoError
 * "PATH: cannot write: REASON". */
void check_writable(const std::string &path);

} // namespace sw_io

#endif
