/** \file
 * The CPE's local data memory (LDM) in the emulator: the per-CPE arena behind
 * ldm_malloc / ldm_free with the budget, alignment, size-match and leak rules, and the
 * check that an address given as "LDM" to a DMA call really is this CPE's LDM.
 */
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include "emu_internal.h"
#include "slave.h"

namespace athread_emu {

namespace {
/** Fresh LDM blocks are filled with this byte: real LDM is not zeroed. */
const unsigned char kFreshLdmByte = 0xA5;

int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }
}  // namespace

// ---------------------------------------------------------------- LdmArena

LdmArena::LdmArena(int64_t bytes, int64_t alignment) : bytes_(bytes), alignment_(alignment) {
    mem_ = static_cast<unsigned char *>(std::aligned_alloc(alignment, round_up(bytes, alignment)));
    if (!mem_) fatal("cannot allocate %" PRId64 " bytes for an LDM arena", bytes);
}

LdmArena::~LdmArena() { std::free(mem_); }

void *LdmArena::allocate(size_t size) {
    // A block occupies its size rounded up to the alignment (at least one unit), so that
    // every block starts aligned. First fit over the gaps between live blocks.
    int64_t need = round_up(size ? static_cast<int64_t>(size) : 1, alignment_);
    uintptr_t at = 0;
    for (const auto &b : blocks_) {
        if (static_cast<int64_t>(b.first - at) >= need) break;
        at = b.first + round_up(b.second ? b.second : 1, alignment_);
    }
    if (static_cast<int64_t>(at) + need > bytes_) return nullptr;
    blocks_[at] = static_cast<int64_t>(size);
    live_bytes_ += static_cast<int64_t>(size);
    std::memset(mem_ + at, kFreshLdmByte, size);
    return mem_ + at;
}

int64_t LdmArena::block_size(const void *p) const {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    if (!contains(a)) return -1;
    auto it = blocks_.find(a - base());
    return it == blocks_.end() ? -1 : it->second;
}

void LdmArena::release(const void *p) {
    auto it = blocks_.find(reinterpret_cast<uintptr_t>(p) - base());
    live_bytes_ -= it->second;
    blocks_.erase(it);
}

bool LdmArena::block_containing(uintptr_t a, uintptr_t *start, int64_t *size) const {
    if (!contains(a)) return false;
    auto it = blocks_.upper_bound(a - base());
    if (it == blocks_.begin()) return false;
    --it;
    if (a - base() >= it->first + static_cast<uint64_t>(it->second)) return false;
    *start = base() + it->first;
    *size = it->second;
    return true;
}

// ---------------------------------------------------------------- address checks

// Under AddressSanitizer with detect_stack_use_after_return, local variables live on a
// "fake stack" outside the thread's stack; these weak hooks let us recognise them.
extern "C" {
void *__asan_get_current_fake_stack(void) __attribute__((weak));
void *__asan_addr_is_in_fake_stack(void *fake_stack, void *addr, void **beg, void **end)
    __attribute__((weak));
}

namespace {
bool in_asan_fake_stack(uintptr_t lo, uintptr_t hi) {
    if (!__asan_get_current_fake_stack || !__asan_addr_is_in_fake_stack) return false;
    void *fake = __asan_get_current_fake_stack();
    void *beg = nullptr, *end = nullptr;
    if (!fake || !__asan_addr_is_in_fake_stack(fake, reinterpret_cast<void *>(lo), &beg, &end))
        return false;
    return hi <= reinterpret_cast<uintptr_t>(end);
}

/** Locates this thread's copy of the __thread_local data, once it exists. */
void locate_tls(Cpe &c) {
    if (c.tls_hi || !c.run->tls.known || c.run->tls.bytes == 0) return;
    uintptr_t block = thread_tls_block(c.run->tls.tls_modid);
    if (!block) return;
    c.tls_lo = block + c.run->tls.offset;
    c.tls_hi = c.tls_lo + static_cast<uintptr_t>(c.run->tls.bytes);
}
}  // namespace

void check_ldm_side(Cpe &c, uintptr_t lo, int64_t len, const char *api, const char *what) {
    if (len <= 0) return;
    uintptr_t hi = lo + static_cast<uintptr_t>(len);
    const char *k = c.run->kernel.c_str();
    if (c.ldm.contains(lo)) {
        uintptr_t start;
        int64_t size;
        if (!c.ldm.block_containing(lo, &start, &size)) {
            fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") is in free LDM "
                  "(no live ldm_malloc block there)", k, c.id, api, what, lo, hi);
        }
        if (hi > start + static_cast<uintptr_t>(size)) {
            fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64
                  " bytes) overruns the LDM block [%#" PRIxPTR ", %#" PRIxPTR ") of ldm_malloc(%"
                  PRId64 ")", k, c.id, api, what, lo, hi, len, start,
                  start + static_cast<uintptr_t>(size), size);
        }
        return;
    }
    if (lo >= c.stack_lo && hi <= c.stack_hi) return;  // a local variable: LDM stack
    if (in_asan_fake_stack(lo, hi)) return;
    locate_tls(c);
    if (lo >= c.tls_lo && hi <= c.tls_hi) return;      // a __thread_local variable
    fatal("kernel '%s' CPE %d: %s %s [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRId64 " bytes) is "
          "not LDM of this CPE (neither an ldm_malloc block, a __thread_local variable nor a "
          "local variable): main memory given where LDM is expected?", k, c.id, api, what,
          lo, hi, len);
}

bool overlaps_ldm(Cpe &c, uintptr_t lo, uintptr_t hi) {
    auto overlaps = [&](uintptr_t a, uintptr_t b) { return lo < b && a < hi; };
    if (overlaps(c.ldm.base(), c.ldm.base() + static_cast<uintptr_t>(c.run->machine->ldm_bytes)))
        return true;
    if (overlaps(c.stack_lo, c.stack_hi)) return true;
    locate_tls(c);
    return overlaps(c.tls_lo, c.tls_hi);
}

}  // namespace athread_emu

// ---------------------------------------------------------------- C API

using namespace athread_emu;

extern "C" void *ldm_malloc(size_t size) {
    Cpe &c = current_cpe("ldm_malloc");
    const sw::Machine &m = *c.run->machine;
    int64_t in_use = ldm_in_use(c);
    int64_t budget = m.ldm_data_budget();
    if (static_cast<int64_t>(size) > budget - in_use) {
        fatal("kernel '%s' CPE %d: ldm_malloc(%zu) exceeds the LDM budget: in use %" PRId64
              " bytes (ldm_malloc %" PRId64 " + __thread_local %" PRId64 "), budget %" PRId64
              " bytes (%s: %" PRId64 " bytes of LDM - %" PRId64 " kept for the stack)",
              c.run->kernel.c_str(), c.id, size, in_use, c.ldm.live_bytes(), c.run->tls.bytes,
              budget, m.name.c_str(), m.ldm_bytes, m.ldm_stack_reserve);
    }
    void *p = c.ldm.allocate(size);
    if (!p) {
        fatal("kernel '%s' CPE %d: ldm_malloc(%zu): no free gap that large in the %" PRId64
              "-byte LDM (fragmented: %zu blocks, %" PRId64 " bytes live, blocks aligned to %"
              PRId64 ")", c.run->kernel.c_str(), c.id, size, m.ldm_bytes, c.ldm.live_blocks(),
              c.ldm.live_bytes(), m.ldm_alignment);
    }
    int64_t now = ldm_in_use(c);
    if (now > c.stats.ldm_peak_bytes) c.stats.ldm_peak_bytes = now;
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
              "ldm_malloc(%" PRId64 "); the sizes must match", c.run->kernel.c_str(), c.id,
              addr, size, had);
    }
    c.ldm.release(addr);
}
