/** \file
 * The CPE's local data memory (LDM) in the emulator: the per-CPE arena behind
 * ldm_malloc / ldm_free with the budget, alignment, size-match and leak rules, and the
 * check that the LDM side of a DMA call lies inside one LDM object of this CPE: a live
 * ldm_malloc block (its requested size), one __thread_local variable (its symbol's size),
 * or the kernel's stack region (the top ldm_stack_reserve bytes below the kernel's entry
 * frame: on the real machine the stack is LDM and that is all it has).
 */
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "emu_internal.h"

namespace athread_emu {

namespace {
/** Fresh LDM blocks are filled with this byte: real LDM is not zeroed. */
const unsigned char kFreshLdmByte = 0xA5;

int64_t round_up(int64_t x, int64_t a) {
    return (x + a - 1) / a * a;
}
} // namespace

// ---------------------------------------------------------------- LdmArena

LdmArena::LdmArena(int64_t bytes, int64_t alignment) : bytes_(bytes), alignment_(alignment) {
    mem_ = static_cast<unsigned char *>(std::aligned_alloc(alignment, round_up(bytes, alignment)));
    if (!mem_)
        fatal("cannot allocate %" PRId64 " bytes for an LDM arena", bytes);
}

LdmArena::~LdmArena() {
    std::free(mem_);
}

void *LdmArena::allocate(size_t size) {
    // A block occupies its size rounded up to the alignment (at least one unit), so that
    // every block starts aligned. First fit over the gaps between live blocks.
    int64_t need = round_up(size ? static_cast<int64_t>(size) : 1, alignment_);
    uintptr_t at = 0;
    for (const auto &b : blocks_) {
        if (static_cast<int64_t>(b.first - at) >= need)
            break;
        at = b.first + round_up(b.second ? b.second : 1, alignment_);
    }
    if (static_cast<int64_t>(at) + need > bytes_)
        return nullptr;
    blocks_[at] = static_cast<int64_t>(size);
    live_bytes_ += static_cast<int64_t>(size);
    std::memset(mem_ + at, kFreshLdmByte, size);
    return mem_ + at;
}

int64_t LdmArena::block_size(const void *p) const {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    if (!contains(a))
        return -1;
    auto it = blocks_.find(a - base());
    return it == blocks_.end() ? -1 : it->second;
}

void LdmArena::release(const void *p) {
    auto it = blocks_.find(reinterpret_cast<uintptr_t>(p) - base());
    live_bytes_ -= it->second;
    blocks_.erase(it);
}

bool LdmArena::block_containing(uintptr_t a, uintptr_t *start, int64_t *size) const {
    if (!contains(a))
        return false;
    auto it = blocks_.upper_bound(a - base());
    if (it == blocks_.begin())
        return false;
    --it;
    if (a - base() >= it->first + static_cast<uint64_t>(it->second))
        return false;
    *start = base() + it->first;
    *size = it->second;
    return true;
}

// ---------------------------------------------------------------- address checks

// Under AddressSanitizer with detect_stack_use_after_return, local variables live on a
// "fake stack" outside the thread's stack; these weak hooks let us recognise them. Under
// AddressSanitizer the stack's redzones also tell exactly where each local variable ends
// (__asan_region_is_poisoned) and what it is called (__asan_locate_address).
extern "C" {
void *__asan_get_current_fake_stack(void) __attribute__((weak));
void *__asan_addr_is_in_fake_stack(void *fake_stack, void *addr, void **beg, void **end)
    __attribute__((weak));
void *__asan_region_is_poisoned(void *beg, size_t size) __attribute__((weak));
const char *__asan_locate_address(void *addr, char *name, size_t name_size, void **region_address,
                                  size_t *region_size) __attribute__((weak));
}

namespace {
bool in_asan_fake_stack(uintptr_t lo, uintptr_t hi) {
    if (!__asan_get_current_fake_stack || !__asan_addr_is_in_fake_stack)
        return false;
    void *fake = __asan_get_current_fake_stack();
    void *beg = nullptr, *end = nullptr;
    if (!fake || !__asan_addr_is_in_fake_stack(fake, reinterpret_cast<void *>(lo), &beg, &end))
        return false;
    return hi <= reinterpret_cast<uintptr_t>(end);
}

/** Locates this thread's copy of the __thread_local data, once it exists. */
void locate_tls(Cpe &c) {
    if (c.tls_hi || !c.run->tls.known || c.run->tls.bytes == 0)
        return;
    uintptr_t block = thread_tls_block(c.run->tls.tls_modid);
    if (!block)
        return;
    c.tls_lo = block + c.run->tls.offset;
    c.tls_hi = c.tls_lo + static_cast<uintptr_t>(c.run->tls.bytes);
}

/** The __thread_local variable of c containing a, or nullptr; *lo is where it starts. */
const TlsLocalSymbol *tls_symbol(Cpe &c, uintptr_t a, uintptr_t *lo) {
    const uintptr_t block = c.tls_lo - c.run->tls.offset;
    for (const TlsLocalSymbol &s : c.run->tls.symbols) {
        const uintptr_t from = block + s.offset, to = from + static_cast<uintptr_t>(s.bytes);
        if (a >= from && (a < to || (s.bytes == 0 && a == from))) {
            *lo = from;
            return &s;
        }
    }
    return nullptr;
}

bool in_tls(Cpe &c, uintptr_t a) {
    locate_tls(c);
    return a >= c.tls_lo && a < c.tls_hi;
}

/** AddressSanitizer surrounds every local variable with redzones (32 bytes or more), so a
 * kernel's frame is several times what it is without: a kernel with an unrolled register
 * block (dozens of floatv4 locals, registers on the real machine) reaches 12 KB. Under ASan
 * the depth check allows this factor more than the reserve. */
constexpr uintptr_t kAsanFrameFactor = 4;

/** The kernel's LDM stack region: [stack_entry - ldm_stack_reserve, stack_entry) (times
 * kAsanFrameFactor under AddressSanitizer). */
uintptr_t stack_region_lo(const Cpe &c) {
    uintptr_t reserve = static_cast<uintptr_t>(c.run->machine->ldm_stack_reserve);
    if (__asan_region_is_poisoned)
        reserve *= kAsanFrameFactor;
    return c.stack_entry - std::min(reserve, c.stack_entry - c.stack_lo);
}

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return line;
}

/** Under AddressSanitizer: the name and extent of the local variable at a, if known. */
std::string asan_local(uintptr_t a) {
    if (!__asan_locate_address)
        return "";
    char name[128] = "";
    void *region = nullptr;
    size_t size = 0;
    const char *kind =
        __asan_locate_address(reinterpret_cast<void *>(a), name, sizeof name, &region, &size);
    if (!kind || std::strcmp(kind, "stack") != 0 || !name[0] || !region)
        return "";
    const uintptr_t r = reinterpret_cast<uintptr_t>(region);
    return format("the local variable '%s' [%#" PRIxPTR ", %#" PRIxPTR
                  ") (%zu bytes) on the CPE stack",
                  name, r, r + size, size);
}

std::string stack_region(const Cpe &c) {
    return format("the CPE stack [%#" PRIxPTR ", %#" PRIxPTR
                  ") (local variables of the kernel: the %" PRId64
                  " bytes of LDM kept for the stack on %s%s)",
                  stack_region_lo(c), c.stack_entry, c.run->machine->ldm_stack_reserve,
                  c.run->machine->name.c_str(),
                  __asan_region_is_poisoned
                      ? format(", %d times that under AddressSanitizer for its redzones",
                               int(kAsanFrameFactor))
                            .c_str()
                      : "");
}
} // namespace

std::string describe_ldm(Cpe &c, uintptr_t a) {
    uintptr_t start;
    int64_t size;
    if (c.ldm.contains(a)) {
        if (!c.ldm.block_containing(a, &start, &size))
            return "free LDM (no live ldm_malloc block there)";
        return format("the LDM block [%#" PRIxPTR ", %#" PRIxPTR ") of ldm_malloc(%" PRId64 ")",
                      start, start + static_cast<uintptr_t>(size), size);
    }
    if (in_tls(c, a)) {
        if (const TlsLocalSymbol *s = tls_symbol(c, a, &start)) {
            return format("the __thread_local variable '%s' [%#" PRIxPTR ", %#" PRIxPTR
                          ") (%" PRId64 " bytes)",
                          s->name.c_str(), start, start + static_cast<uintptr_t>(s->bytes),
                          s->bytes);
        }
        return format("the __thread_local data of %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64
                      " bytes)",
                      c.run->tls.module.c_str(), c.tls_lo, c.tls_hi, c.run->tls.bytes);
    }
    if (a >= c.stack_lo && a < c.stack_hi) {
        const std::string local = asan_local(a);
        return local.empty() ? stack_region(c) : local;
    }
    if (in_asan_fake_stack(a, a + 1))
        return "a local variable (AddressSanitizer's fake stack)";
    return "no LDM object of this CPE";
}

void check_ldm_side(Cpe &c, uintptr_t lo, int64_t len, const char *api, const char *what) {
    if (len <= 0)
        return;
    const char *k = c.run->kernel.c_str();
    if (static_cast<uint64_t>(len) > UINTPTR_MAX - lo) {
        fatal("kernel '%s' CPE %d: %s %s at %#" PRIxPTR " (%" PRId64 " bytes) wraps around the "
              "address space",
              k, c.id, api, what, lo, len);
    }
    const uintptr_t hi = lo + static_cast<uintptr_t>(len);
    // Every violation: "<range> overruns <object> [start, end) (n bytes): k bytes past its end".
    auto overrun = [&](const std::string &object, uintptr_t end) {
        fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64
              " bytes) overruns %s: "
              "%" PRIuPTR " bytes past its end",
              k, c.id, api, what, lo, hi, len, object.c_str(), hi - end);
    };
    uintptr_t start;
    int64_t size;
    // An ldm_malloc block: its own requested size.
    if (c.ldm.contains(lo)) {
        if (!c.ldm.block_containing(lo, &start, &size)) {
            fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64 " bytes) is "
                  "in free LDM (no live ldm_malloc block there)",
                  k, c.id, api, what, lo, hi, len);
        }
        const uintptr_t end = start + static_cast<uintptr_t>(size);
        if (hi > end)
            overrun(describe_ldm(c, lo), end);
        return;
    }
    // A __thread_local variable: its own extent (symbol table), else the section's.
    if (in_tls(c, lo)) {
        if (!c.run->tls.symbols.empty()) {
            const TlsLocalSymbol *s = tls_symbol(c, lo, &start);
            if (!s) {
                fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64
                      " bytes) starts "
                      "in %s but in no __thread_local variable (padding)",
                      k, c.id, api, what, lo, hi, len, describe_ldm(c, lo).c_str());
            }
            const uintptr_t end = start + static_cast<uintptr_t>(s->bytes);
            if (hi > end)
                overrun(describe_ldm(c, lo), end);
        } else if (hi > c.tls_hi) {
            overrun(describe_ldm(c, lo), c.tls_hi);
        }
        return;
    }
    // A local variable: on the real machine the stack is in LDM and has ldm_stack_reserve
    // bytes. The range must lie in the kernel's part of the stack, within that reserve.
    if (lo >= c.stack_lo && lo < c.stack_hi) {
        if (!c.stack_entry)
            return; // not a kernel thread (cannot happen: current_cpe)
        const uintptr_t region_lo = stack_region_lo(c);
        if (hi > c.stack_entry) {
            const std::string local = asan_local(lo);
            fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64
                  " bytes) overruns %s%s%s: "
                  "%" PRIuPTR
                  " bytes past the kernel's entry frame (the local variable is too small)",
                  k, c.id, api, what, lo, hi, len, local.empty() ? "" : local.c_str(),
                  local.empty() ? "" : ", in ", stack_region(c).c_str(), hi - c.stack_entry);
        }
        if (lo < region_lo) {
            fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64
                  " bytes) is a local "
                  "variable %" PRIuPTR
                  " bytes below the kernel's entry frame, deeper than %s: on the "
                  "real machine it is not in LDM",
                  k, c.id, api, what, lo, hi, len, c.stack_entry - lo, stack_region(c).c_str());
        }
        // Under AddressSanitizer the redzones between local variables give their exact ends.
        if (__asan_region_is_poisoned) {
            if (void *bad = __asan_region_is_poisoned(reinterpret_cast<void *>(lo),
                                                      static_cast<size_t>(len))) {
                const std::string local = asan_local(lo);
                fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64
                      " bytes) overruns %s: "
                      "%" PRIuPTR " bytes past its end",
                      k, c.id, api, what, lo, hi, len,
                      (local.empty() ? "a local variable on the CPE stack" : local).c_str(),
                      hi - reinterpret_cast<uintptr_t>(bad));
            }
        }
        return;
    }
    if (in_asan_fake_stack(lo, hi))
        return;
    fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64 " bytes) is "
          "not LDM of this CPE (neither an ldm_malloc block, a __thread_local variable nor a "
          "local variable): main memory given where LDM is expected?",
          k, c.id, api, what, lo, hi, len);
}

void locate_own_tls(Cpe &c) {
    locate_tls(c);
}

bool ldm_position(Cpe &c, uintptr_t a, LdmPosition *p) {
    if (c.ldm.contains(a)) {
        *p = LdmPosition{LdmPosition::Arena, a - c.ldm.base()};
        return true;
    }
    if (in_tls(c, a)) {
        *p = LdmPosition{LdmPosition::Tls, a - c.tls_lo};
        return true;
    }
    if (c.stack_entry && a >= stack_region_lo(c) && a < c.stack_entry) {
        *p = LdmPosition{LdmPosition::Stack, c.stack_entry - a};
        return true;
    }
    return false;
}

uintptr_t ldm_address(Cpe &t, const LdmPosition &p) {
    switch (p.region) {
    case LdmPosition::Arena:
        return t.ldm.base() + p.offset;
    case LdmPosition::Tls:
        return t.tls_hi ? t.tls_lo + p.offset : 0;
    case LdmPosition::Stack:
        return t.stack_entry ? t.stack_entry - p.offset : 0;
    }
    return 0;
}

bool overlaps_ldm(Cpe &c, uintptr_t lo, uintptr_t hi) {
    auto overlaps = [&](uintptr_t a, uintptr_t b) { return lo < b && a < hi; };
    if (overlaps(c.ldm.base(), c.ldm.base() + static_cast<uintptr_t>(c.run->machine->ldm_bytes)))
        return true;
    if (overlaps(c.stack_lo, c.stack_hi))
        return true;
    locate_tls(c);
    return overlaps(c.tls_lo, c.tls_hi);
}

} // namespace athread_emu

// ---------------------------------------------------------------- C API

using namespace athread_emu;

// The real slave.h does not declare ldm_malloc / ldm_free (athread-api.md): CPE code that
// calls them declares them itself, with these prototypes.
extern "C" {
void *ldm_malloc(size_t size);
void ldm_free(void *p, size_t size);
}

extern "C" void *ldm_malloc(size_t size) {
    Cpe &c = current_cpe("ldm_malloc");
    const sw::Machine &m = *c.run->machine;
    int64_t in_use = ldm_in_use(c);
    int64_t budget = m.ldm_data_budget();
    // Compared as unsigned sizes: (size_t)-1 and other sizes beyond INT64_MAX must not wrap
    // to a negative request that passes the budget.
    if (size > static_cast<uint64_t>(m.ldm_bytes)) {
        fatal("kernel '%s' CPE %d: ldm_malloc(%zu) is larger than the whole LDM of a CPE (%s: "
              "%" PRId64 " bytes; a negative size converted to size_t?)",
              c.run->kernel.c_str(), c.id, size, m.name.c_str(), m.ldm_bytes);
    }
    if (in_use > budget || size > static_cast<uint64_t>(budget - in_use)) {
        fatal("kernel '%s' CPE %d: ldm_malloc(%zu) exceeds the LDM budget: in use %" PRId64
              " bytes (ldm_malloc %" PRId64 " + __thread_local %" PRId64 "), budget %" PRId64
              " bytes (%s: %" PRId64 " bytes of LDM - %" PRId64 " kept for the stack)",
              c.run->kernel.c_str(), c.id, size, in_use, c.ldm.live_bytes(), c.run->tls.bytes,
              budget, m.name.c_str(), m.ldm_bytes, m.ldm_stack_reserve);
    }
    void *p;
    {
        std::lock_guard<std::mutex> lock(c.ldm_mu);
        p = c.ldm.allocate(size);
    }
    if (!p) {
        fatal("kernel '%s' CPE %d: ldm_malloc(%zu): no free gap that large in the %" PRId64
              "-byte LDM (fragmented: %zu blocks, %" PRId64
              " bytes live, blocks aligned to %" PRId64 ")",
              c.run->kernel.c_str(), c.id, size, m.ldm_bytes, c.ldm.live_blocks(),
              c.ldm.live_bytes(), m.ldm_alignment);
    }
    int64_t now = ldm_in_use(c);
    if (now > c.stats.ldm_peak_bytes)
        c.stats.ldm_peak_bytes = now;
    return p;
}

extern "C" void ldm_free(void *addr, size_t size) {
    Cpe &c = current_cpe("ldm_free");
    int64_t had = c.ldm.block_size(addr);
    if (had < 0) {
        fatal("kernel '%s' CPE %d: ldm_free(%p, %zu): not a live block from this CPE's "
              "ldm_malloc (never allocated, already freed, or not its start)",
              c.run->kernel.c_str(), c.id, addr, size);
    }
    if (had != static_cast<int64_t>(size)) {
        fatal("kernel '%s' CPE %d: ldm_free(%p, %zu): the block was allocated with "
              "ldm_malloc(%" PRId64 "); the sizes must match",
              c.run->kernel.c_str(), c.id, addr, size, had);
    }
    std::lock_guard<std::mutex> lock(c.ldm_mu);
    c.ldm.release(addr);
}
