/** \file
 * Error and warning output of the athread emulator. Errors print one line starting
 * "athread emulator: error:" and end the process with status 134 (as abort would),
 * without running exit handlers: other CPE threads may still be running.
 */
#include <cstdarg>
#include <cstdio>
#include <mutex>

#include <unistd.h>

#include "emu_internal.h"

namespace athread_emu {

namespace {
void vprint(const char *kind, const char *fmt, va_list ap) {
    char line[2048];
    std::vsnprintf(line, sizeof line, fmt, ap);
    std::fprintf(stderr, "athread emulator: %s: %s\n", kind, line);
}
} // namespace

void fatal(const char *fmt, ...) {
    // Only the first failing thread reports; the others wait here until _exit.
    static std::mutex dying;
    dying.lock();
    va_list ap;
    va_start(ap, fmt);
    vprint("error", fmt, ap);
    va_end(ap);
    std::fflush(stderr);
    _exit(134);
}

void warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprint("warning", fmt, ap);
    va_end(ap);
}

} // namespace athread_emu
