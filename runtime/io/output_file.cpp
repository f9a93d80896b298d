#include "output_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sw_io {

namespace {

std::string cannot_write(const std::string &path, const std::string &reason) {
    return path + ": cannot write: " + reason;
}

/** Writes one probe byte to \p fd if it is a character device other than a terminal (where
 * a write fails at once, e.g. /dev/full, or goes nowhere, e.g. /dev/null). Returns 0 or the
 * errno of the failed write. */
int probe_device(int fd) {
    struct stat st;
    if (::fstat(fd, &st) != 0)
        return errno;
    if (!S_ISCHR(st.st_mode) || ::isatty(fd))
        return 0;
    const char byte = '\n';
    return ::write(fd, &byte, 1) == 1 ? 0 : errno;
}

} // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
    struct stat st;
    if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw IoError(cannot_write(path_, "is a directory"));
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_)
        throw IoError(cannot_write(path_, std::strerror(errno)));
    if (const int err = probe_device(fileno(file_))) {
        std::fclose(file_);
        file_ = nullptr;
        throw IoError(cannot_write(path_, std::strerror(err)));
    }
}

OutputFile::~OutputFile() {
    if (file_)
        std::fclose(file_);
}

OutputFile::OutputFile(OutputFile &&other) noexcept
    : path_(std::move(other.path_)), file_(other.file_) {
    other.file_ = nullptr;
}

OutputFile &OutputFile::operator=(OutputFile &&other) noexcept {
    if (this != &other) {
        if (file_)
            std::fclose(file_);
        path_ = std::move(other.path_);
        file_ = other.file_;
        other.file_ = nullptr;
    }
    return *this;
}

void OutputFile::fail(const std::string &what, int err) {
    if (file_)
        std::fclose(file_);
    file_ = nullptr;
    throw IoError(path_ + ": " + what + ": " + (err ? std::strerror(err) : "unknown error"));
}

void OutputFile::write(const void *data, size_t bytes) {
    if (!file_)
        throw IoError(path_ + ": write after close");
    if (bytes && std::fwrite(data, 1, bytes, file_) != bytes)
        fail("write failed", errno);
}

void OutputFile::close() {
    if (!file_)
        return;
    errno = 0;
    const bool flushed = std::fflush(file_) == 0 && !std::ferror(file_);
    const int flush_err = errno;
    FILE *f = file_;
    file_ = nullptr;
    errno = 0;
    const bool closed = std::fclose(f) == 0;
    if (!flushed || !closed)
        throw IoError(path_ + ": write failed: " + std::strerror(flushed ? errno : flush_err));
}

void check_writable(const std::string &path) {
    struct stat st;
    const bool existed = ::stat(path.c_str(), &st) == 0;
    if (existed && S_ISDIR(st.st_mode))
        throw IoError(cannot_write(path, "is a directory"));
    // O_APPEND without O_TRUNC: an existing file keeps its contents.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0)
        throw IoError(cannot_write(path, std::strerror(errno)));
    const int err = probe_device(fd);
    ::close(fd);
    if (!existed)
        ::unlink(path.c_str());
    if (err)
        throw IoError(cannot_write(path, std::strerror(err)));
}

} // namespace sw_io
