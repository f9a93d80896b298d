/** \file
 * athread_get / athread_put in the emulator: argument and bounds checks, the copy with
 * the real block/gap semantics, the reply word, the per-CPE counters and the observer.
 *
 * Semantics (shared/sunway/athread-api.md): `len` bytes in total; the LDM side is
 * contiguous; main memory is cut into blocks of `bsize` bytes (the last one shorter if
 * len is not a multiple), each followed by a gap of `stride` bytes; bsize == 0 means one
 * contiguous block. The copy is done before the call returns, then *reply += 1.
 *
 * BCAST_MODE (athread_get only): one CPE issues the request; the same bytes land at the same
 * LDM address of every CPE of the rows selected by `mask` (bit r: mesh row r), the issuer
 * included if its row is selected; only the issuer's reply word counts the request (the
 * others learn of the data through a barrier). Sources: dxhisboy/shenwei-doc data-en.yaml
 * (athread_get: mask = one bit per row, for BCAST/BROW only; athread_put has no broadcast
 * modes), jameslinsjtu/swCandle memory/stream_sw/BCAST/BCAST_CONT (CPE 0 alone issues,
 * mask 255, waits for reply 1), NSCC-Wuxi style bcast_get macros (athread_syn, CPE 0 issues
 * with mask 0xff and waits for its reply, athread_syn). ROW_MODE, BROW_MODE and RANK_MODE are
 * errors: the sources name them but do not say who issues them or how the data is divided.
 */
#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "emu_internal.h"
#include "slave.h"

namespace athread_emu {

namespace {

const char *mode_name(dma_mode m) {
    switch (m) {
    case PE_MODE:
        return "PE_MODE";
    case BCAST_MODE:
        return "BCAST_MODE";
    case ROW_MODE:
        return "ROW_MODE";
    case BROW_MODE:
        return "BROW_MODE";
    case RANK_MODE:
        return "RANK_MODE";
    }
    return "unknown mode";
}

/** The registered buffer nearest to [lo, hi) (distance 0 if they overlap). */
const Buffer *nearest_buffer(const std::vector<Buffer> &bufs, uintptr_t lo, uintptr_t hi) {
    const Buffer *best = nullptr;
    uintptr_t best_d = UINTPTR_MAX;
    for (const Buffer &b : bufs) {
        uintptr_t d = hi <= b.lo ? b.lo - hi + 1 : (lo >= b.hi ? lo - b.hi + 1 : 0);
        if (d < best_d)
            best_d = d, best = &b;
    }
    return best;
}

void check_main_block(Cpe &c, const char *api, uintptr_t lo, uintptr_t hi, int64_t block,
                      int64_t nblocks) {
    const char *k = c.run->kernel.c_str();
    if (overlaps_ldm(c, lo, hi)) {
        fatal("kernel '%s' CPE %d: %s main-memory side [%#" PRIxPTR ", %#" PRIxPTR
              ") (block %" PRId64 " of %" PRId64
              ") is this CPE's LDM: source and destination swapped?",
              k, c.id, api, lo, hi, block, nblocks);
    }
    const std::vector<Buffer> &bufs = c.run->buffers;
    if (bufs.empty())
        return;
    for (const Buffer &b : bufs)
        if (lo >= b.lo && hi <= b.hi)
            return;
    const Buffer *n = nearest_buffer(bufs, lo, hi);
    // Position relative to the nearest buffer, e.g. "bytes 1000..1064 of 'in'".
    long long from = static_cast<long long>(lo - n->lo), to = static_cast<long long>(hi - n->lo);
    fatal("kernel '%s' CPE %d: %s main memory [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRIuPTR
          " bytes, block %" PRId64 " of %" PRId64 ") is outside every registered buffer; "
          "nearest buffer '%s' [%#" PRIxPTR ", %#" PRIxPTR ") (%" PRIuPTR " bytes); the "
          "access is bytes %lld..%lld relative to its start",
          k, c.id, api, lo, hi, hi - lo, block, nblocks, n->name.c_str(), n->lo, n->hi,
          n->hi - n->lo, from, to);
}

/** A receiver of a broadcast get: its CPE and its LDM address. */
struct Receiver {
    Cpe *cpe;
    unsigned char *ldm;
};

/** The receivers of a broadcast get issued by c (`cast`: the mesh rows or columns whose bit is
 *  set in its mask), each with the LDM address that is `ldm` of c (same arena offset,
 *  __thread_local offset or depth below the kernel's entry frame) and its LDM side checked on
 *  that CPE. */
std::vector<Receiver> bcast_receivers(Cpe &c, const char *api, DmaCast cast, void *ldm, int len) {
    const std::vector<Cpe *> cpes = cpes_of_lines(c, api, cast.kind == DmaCast::Rows, cast.mask);
    LdmPosition pos;
    if (!ldm_position(c, reinterpret_cast<uintptr_t>(ldm), &pos)) {
        fatal("kernel '%s' CPE %d: %s: LDM side %p is not LDM of this CPE (in %s): a broadcast "
              "writes the same LDM address on every receiver",
              c.run->kernel.c_str(), c.id, api, ldm,
              describe_ldm(c, reinterpret_cast<uintptr_t>(ldm)).c_str());
    }
    std::vector<Receiver> out;
    for (Cpe *t : cpes)
        out.push_back(
            Receiver{t, receiver_address(c, *t, api, "LDM side on this receiver", pos, len)});
    return out;
}

} // namespace

std::vector<Cpe *> cpes_of_lines(Cpe &c, const char *api, bool rows, unsigned mask) {
    Run &run = *c.run;
    const sw::Machine &m = *run.machine;
    const int lines = rows ? m.cpe_mesh_rows : m.cpe_mesh_cols;
    const char *line = rows ? "row" : "column";
    const unsigned all = (1u << lines) - 1;
    if ((mask & all) == 0 || (mask & ~all) != 0) {
        fatal("kernel '%s' CPE %d: %s with mask %#x: the mask has one bit per mesh %s (%d %ss: "
              "a non-zero value within %#x)",
              run.kernel.c_str(), c.id, api, mask, line, lines, line, all);
    }
    std::vector<Cpe *> out;
    for (auto &t : run.cpes)
        if (mask >> (rows ? t->row : t->col) & 1)
            out.push_back(t.get());
    return out;
}

unsigned char *receiver_address(Cpe &issuer, Cpe &t, const char *api, const char *what,
                                const LdmPosition &p, int64_t len) {
    const uintptr_t a = ldm_address(t, p);
    if (!a) {
        fatal("kernel '%s' CPE %d: %s: CPE %d has no %s yet (has it started the kernel? broadcast "
              "or issue RMA after a barrier)",
              issuer.run->kernel.c_str(), issuer.id, api, t.id,
              p.region == LdmPosition::Tls ? "__thread_local data" : "kernel stack");
    }
    const std::string receiver_api = std::string(api) + " (issued by another CPE)";
    std::lock_guard<std::mutex> lock(t.ldm_mu);
    check_ldm_side(t, a, len, receiver_api.c_str(), what);
    return reinterpret_cast<unsigned char *>(a);
}

int dma_request(Cpe &c, const char *api, bool is_put, DmaCast cast, void *main_mem, void *ldm,
                int len, void *reply, int stride, int bsize) {
    const char *k = c.run->kernel.c_str();
    const bool bcast = cast.kind != DmaCast::None;
    if (len < 0 || stride < 0 || bsize < 0) {
        // Name what the request was for: the LDM object and the main-memory buffer.
        const uintptr_t m = reinterpret_cast<uintptr_t>(main_mem);
        const Buffer *b = nearest_buffer(c.run->buffers, m, m + 1);
        const bool inside = b && m >= b->lo && m < b->hi;
        fatal("kernel '%s' CPE %d: %s with negative %s (len %d, stride %d, bsize %d): LDM side %p "
              "in %s, main memory %p %s%s%s",
              k, c.id, api, len < 0 ? "len" : (stride < 0 ? "stride" : "bsize"), len, stride, bsize,
              ldm, describe_ldm(c, reinterpret_cast<uintptr_t>(ldm)).c_str(), main_mem,
              inside ? "in buffer '" : "(in no registered buffer)", inside ? b->name.c_str() : "",
              inside ? "'" : "");
    }
    if (reply) {
        if (reinterpret_cast<uintptr_t>(reply) % 4 != 0) {
            fatal("kernel '%s' CPE %d: %s reply word %p is not 4-byte aligned", k, c.id, api,
                  reply);
        }
        check_ldm_side(c, reinterpret_cast<uintptr_t>(reply), sizeof(int), api, "reply word");
    }
    std::vector<Receiver> receivers;
    if (bcast)
        receivers = bcast_receivers(c, api, cast, ldm, len);
    else
        check_ldm_side(c, reinterpret_cast<uintptr_t>(ldm), len, api, "LDM side");

    // Walk the blocks: check them all first, then copy, so a failing request moves nothing.
    const int64_t block = bsize > 0 ? bsize : (len > 0 ? len : 1);
    const int64_t pitch = bsize > 0 ? int64_t(bsize) + stride : block;
    const int64_t nblocks = (len + block - 1) / block;
    const int64_t line = c.run->machine->dma_line_bytes;
    const uintptr_t main_base = reinterpret_cast<uintptr_t>(main_mem);
    // The main-memory span: at most (2^31 - 1) blocks of pitch < 2^32, so no int64 overflow;
    // but main_base + span may wrap around the address space.
    const int64_t span =
        (nblocks - 1) * pitch + std::min<int64_t>(block, len - (nblocks - 1) * block);
    if (len > 0 && static_cast<uint64_t>(span) > UINTPTR_MAX - main_base) {
        fatal("kernel '%s' CPE %d: %s main memory %p + %" PRId64
              " bytes (len %d, stride %d, bsize %d) "
              "wraps around the address space",
              k, c.id, api, main_mem, span, len, stride, bsize);
    }
    int64_t line_bytes = 0;
    for (int64_t i = 0; i < nblocks; i++) {
        uintptr_t lo = main_base + static_cast<uintptr_t>(i * pitch);
        int64_t n = std::min<int64_t>(block, len - i * block);
        uintptr_t hi = lo + static_cast<uintptr_t>(n);
        check_main_block(c, api, lo, hi, i, nblocks);
        uintptr_t first_line = lo / line * line;
        uintptr_t end_line = (hi + line - 1) / line * line;
        line_bytes += static_cast<int64_t>(end_line - first_line);
    }
    auto *l = static_cast<unsigned char *>(ldm);
    for (int64_t i = 0; i < nblocks; i++) {
        auto *m = reinterpret_cast<unsigned char *>(main_base + static_cast<uintptr_t>(i * pitch));
        int64_t n = std::min<int64_t>(block, len - i * block);
        if (is_put)
            std::memcpy(m, l + i * block, n);
        else if (bcast)
            for (const Receiver &r : receivers)
                std::memcpy(r.ldm + i * block, m, n);
        else
            std::memcpy(l + i * block, m, n);
    }

    athread_emu_cpe_stats &s = c.stats;
    (is_put ? s.put_requests : s.get_requests) += 1;
    (is_put ? s.put_bytes : s.get_bytes) += len;
    (is_put ? s.put_blocks : s.get_blocks) += nblocks;
    (is_put ? s.put_line_bytes : s.get_line_bytes) += line_bytes;
    log_dma(c, is_put, line_bytes, nblocks, reply);
    if (c.run->observer)
        c.run->observer(c.run->observer_user, c.id, is_put, main_mem, len, bsize, stride);
    if (reply)
        __atomic_fetch_add(static_cast<int *>(reply), 1, __ATOMIC_SEQ_CST);
    return 0;
}

namespace {

/** athread_get (is_put = false) and athread_put of SW26010's slave.h: the mode checks. */
int athread_dma(bool is_put, dma_mode mode, void *main_mem, void *ldm, int len, void *reply,
                int stride, int bsize, char mask) {
    const char *api = is_put ? "athread_put" : "athread_get";
    Cpe &c = current_cpe(api);
    const char *k = c.run->kernel.c_str();
    if (is_put && (mode == BCAST_MODE || mode == BROW_MODE)) {
        fatal("kernel '%s' CPE %d: athread_put in %s: puts have no broadcast modes (only "
              "athread_get broadcasts)",
              k, c.id, mode_name(mode));
    }
    if (mode != PE_MODE && mode != BCAST_MODE) {
        fatal("kernel '%s' CPE %d: %s in %s is not supported by the emulator (PE_MODE and, for "
              "athread_get, BCAST_MODE only: the public sources do not establish which CPEs "
              "take part in %s and how the data is divided among them)",
              k, c.id, api, mode_name(mode), mode_name(mode));
    }
    DmaCast cast;
    if (mode == BCAST_MODE) {
        cast.kind = DmaCast::Rows;
        cast.mask = static_cast<unsigned char>(mask);
    }
    return dma_request(c, mode == BCAST_MODE ? "athread_get in BCAST_MODE" : api, is_put, cast,
                       main_mem, ldm, len, reply, stride, bsize);
}

} // namespace
} // namespace athread_emu

extern "C" int athread_get(dma_mode mode, void *src, void *dest, int len, void *reply, char mask,
                           int stride, int bsize) {
    return athread_emu::athread_dma(false, mode, src, dest, len, reply, stride, bsize, mask);
}

extern "C" int athread_put(dma_mode mode, void *src, void *dest, int len, void *reply, int stride,
                           int bsize) {
    return athread_emu::athread_dma(true, mode, dest, src, len, reply, stride, bsize, 0);
}
