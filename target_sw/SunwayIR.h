/** \file
 * The Sunway IR vocabulary: every intrinsic, variable and naming convention the Sunway passes
 * put into the Halide IR, with a typed builder and a typed matcher for each. The passes and
 * the code generators build and read these nodes only through this header; nothing outside
 * SunwayIR.cpp reads an argument of a Sunway intrinsic by its position.
 *
 * The IR itself (names, argument order and types) is:
 *   sw_launch(kernel)                          Int(32), Extern: in the host body, launches
 *                                              SwFunction::kernels[kernel] (FindCpeKernels)
 *   sw_dma_begin(site)                         Int(32), Extern: statement; a DMA site starts
 *   sw_dma_request(is_put, "ldm", ldm_index, "main", main_index, block_elems, rows,
 *                  pitch_elems, site[, mask]) Int(32), Extern: statement; one athread_get/put
 *                                              (InjectDma); mask: the row mask of a
 *                                              BCAST_MODE get (BroadcastDma)
 *   sw_dma_wait(site)                          Int(32), Extern: statement; wait for every
 *                                              request of the site (DelayDmaWaits moves it)
 *   sw_bcast_barrier()                         Int(32), Extern: statement; athread_syn over
 *                                              the core group (BroadcastDma)
 *   sw_bcast_issuer(issuers[, row])            Bool, Extern, issuers an Int(32) constant:
 *                                              condition "this CPE issues (a piece of) the
 *                                              broadcast": CPEs 0 .. issuers - 1, or with
 *                                              row (the mesh's columns) the CPEs in
 *                                              columns 0 .. issuers - 1 of every row
 *   sw_cpe_id()                                Int(32), Extern: this CPE's id, 0..63 (the
 *                                              piece of a broadcast it issues)
 *   sw_regcomm_share("buffer", bytes, how,     Int(32), Extern, bytes an Int(64) constant,
 *                    offset)                   how an Int(32) constant (sw::Sharing: the
 *                                              whole mesh, along rows or down columns),
 *                                              offset in elements: statement;
 *                                              register-communication sharing
 *   sw_active                                  Bool Variable of a uniform block loop: this
 *                                              round's block exists on this CPE
 *   sw_acc*                                    Allocate/Load/Store names of accumulators
 *                                              promoted to registers (PromoteAccumulators)
 *   ProducerConsumer "sw_padding_fill.<buffer>" around the padding fill of a zero-padded
 *                                              window staged in LDM buffer <buffer>
 *                                              (InjectDma marks it, HoistPaddingFill moves
 *                                              it and removes every mark)
 * and the alignment a Load or Store of a vector records (AlignVectorAccesses).
 */
#ifndef SW_SUNWAY_IR_H
#define SW_SUNWAY_IR_H

#include "Halide.h"
#include "target_sw/Directives.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace sw {
namespace ir {

/** @name Names of the Sunway intrinsics (Call::name), and of the variables and buffers with a
 * meaning of their own. Only this header and SunwayIR.cpp compare against them. */
///@{
constexpr const char *launch_name = "sw_launch";
constexpr const char *dma_begin_name = "sw_dma_begin";
constexpr const char *dma_request_name = "sw_dma_request";
constexpr const char *dma_wait_name = "sw_dma_wait";
constexpr const char *bcast_barrier_name = "sw_bcast_barrier";
constexpr const char *bcast_issuer_name = "sw_bcast_issuer";
constexpr const char *cpe_id_name = "sw_cpe_id";
constexpr const char *regcomm_share_name = "sw_regcomm_share";
/** Bool variable of a uniform block loop (BroadcastDma.h). */
constexpr const char *block_active_name = "sw_active";
/** Prefix of the register variables PromoteAccumulators introduces. */
constexpr const char *register_prefix = "sw_acc";
///@}

/** Whether \p c is any of the Sunway intrinsics above (DMA, launch, broadcast, sharing). */
bool is_sunway_intrinsic(const Halide::Internal::Call *c);

// ---- Kernel launch (host body) ----

/** Evaluate(sw_launch(kernel)). */
Halide::Internal::Stmt make_launch(int kernel);
/** The kernel index of an sw_launch call. */
std::optional<int> as_launch(const Halide::Internal::Call *c);

// ---- DMA (kernel bodies) ----

/** Evaluate(sw_dma_begin(site)) and Evaluate(sw_dma_wait(site)). */
Halide::Internal::Stmt make_dma_begin(int site);
Halide::Internal::Stmt make_dma_wait(int site);
/** The site of an sw_dma_begin / sw_dma_wait call or statement (Evaluate of the call). */
std::optional<int> as_dma_begin(const Halide::Internal::Call *c);
std::optional<int> as_dma_wait(const Halide::Internal::Call *c);
std::optional<int> as_dma_begin(const Halide::Internal::Stmt &s);
std::optional<int> as_dma_wait(const Halide::Internal::Stmt &s);

/** One DMA request: \p rows blocks of \p block_elems contiguous elements, \p pitch_elems apart in
 * main memory and consecutive in the LDM (rows 1: one contiguous block). */
struct DmaRequest {
    bool is_put = false; ///< LDM -> main memory
    std::string ldm_buffer;
    Halide::Expr ldm_index; ///< element index of the first LDM element
    std::string main_buffer;
    Halide::Expr main_index;  ///< element index of the first main-memory element
    Halide::Expr block_elems; ///< contiguous elements per block
    Halide::Expr rows;        ///< blocks
    Halide::Expr pitch_elems; ///< elements from one block's start to the next in main memory
    int site = 0;             ///< which begin / wait pair counts the request
    Halide::Expr bcast_mask;  ///< defined: a BCAST_MODE get to the mesh rows of this mask
};
/** sw_dma_request(...) of \p r (the Exprs as given, not simplified). */
Halide::Expr dma_request(const DmaRequest &r);
/** Evaluate(dma_request(r)). */
Halide::Internal::Stmt make_dma_request(const DmaRequest &r);
std::optional<DmaRequest> as_dma_request(const Halide::Internal::Call *c);

/** \p fill marked as the padding fill of LDM buffer \p buffer: the elements of a zero-padded
 * window outside the in-bounds box its DMA writes (HoistPaddingFill.h). */
Halide::Internal::Stmt make_padding_fill(const std::string &buffer,
                                         const Halide::Internal::Stmt &fill);
/** The buffer and the fill of a marked padding fill. */
std::optional<std::pair<std::string, Halide::Internal::Stmt>>
as_padding_fill(const Halide::Internal::Stmt &s);

/** Whether \p c is one of the DMA intrinsics (begin, request, wait). */
bool is_dma_intrinsic(const Halide::Internal::Call *c);
/** The site a DMA intrinsic (begin, request or wait) counts on; nullopt for any other call. */
std::optional<int> dma_site(const Halide::Internal::Call *c);
/** \p c, a DMA intrinsic, counting on \p site instead (the other arguments the same). */
Halide::Expr with_dma_site(const Halide::Internal::Call *c, int site);

// ---- Broadcast and register-communication sharing (BroadcastDma.h) ----

/** Evaluate(sw_bcast_barrier()). */
Halide::Internal::Stmt make_bcast_barrier();
bool is_bcast_barrier(const Halide::Internal::Call *c);
bool is_bcast_barrier(const Halide::Internal::Stmt &s);
/** sw_bcast_issuer(issuers): true on the CPEs that issue a broadcast, 0 .. issuers - 1; with
 * \p row_width > 0 (a broadcast to each mesh row, Sharing::DmaRow), those in columns 0 ..
 * issuers - 1 of every row of that width. */
Halide::Expr bcast_issuer(int issuers = 1, int row_width = 0);
bool is_bcast_issuer(const Halide::Internal::Call *c);
bool is_bcast_issuer(const Halide::Expr &e);
/** The number of issuers of a sw_bcast_issuer call (per mesh row where it has a row width). */
int bcast_issuers(const Halide::Internal::Call *c);
/** The row width of a sw_bcast_issuer call: 0 for a broadcast to the whole core group. */
int bcast_issuer_row_width(const Halide::Internal::Call *c);
/** sw_cpe_id(): this CPE's id in its core group. */
Halide::Expr cpe_id();
bool is_cpe_id(const Halide::Internal::Call *c);

struct RegcommShare {
    std::string buffer;             ///< the LDM buffer passed on
    int64_t bytes = 0;              ///< its size (of one slot, double buffered)
    Sharing how = Sharing::RegComm; ///< RegComm, RegCommRow or RegCommColumn
    /** Where the bytes start in the buffer, in its elements: 0, or the slot of a double-
     * buffered staging (DoubleBuffer.h), an Int(32) expression. */
    Halide::Expr offset = 0;
};
/** Evaluate(sw_regcomm_share("buffer", bytes, how, offset)). */
Halide::Internal::Stmt make_regcomm_share(const RegcommShare &r);
std::optional<RegcommShare> as_regcomm_share(const Halide::Internal::Call *c);

/** Whether \p c is a barrier, a broadcast issue or a register-communication sharing (something
 * every CPE must run). */
bool is_collective(const Halide::Internal::Call *c);
/** Whether \p s (possibly undefined) contains a collective call. */
bool has_collective(const Halide::Internal::Stmt &s);

/** The Bool variable sw_active of a uniform block loop. */
Halide::Expr block_active();

// ---- Registers (PromoteAccumulators.h) ----

/** A new, unique register name. */
std::string new_register_name();
/** Whether the buffer \p name is a register introduced by PromoteAccumulators. */
bool is_register(const std::string &name);

// ---- Alignment of vector accesses (AlignVectorAccesses.h) ----

/** Whether a dense vector access of type \p t at an index whose base has alignment \p a
 * (in elements, as recorded by align_vector_accesses) starts on a whole vector. */
bool vector_access_aligned(const Halide::Type &t, const Halide::Internal::ModulusRemainder &a);

/** Whether \p s only issues DMA requests (through lets, producer/consumer marks, guards and
 * loops): a box's rows requested one each, a mesh source's staging channel by channel. */
bool issues_only(const Halide::Internal::Stmt &s);

/** The sites of the DMA get requests of a statement, and whether it issues any request (get or
 * put); with \p skip_loops, not counting the requests inside nested loops that do more than
 * issue requests (a loop of requests counts as its statement's: issues_only). */
struct RequestSites {
    std::set<int> gets;
    bool any = false;
};
RequestSites request_sites(const Halide::Internal::Stmt &s, bool skip_loops);

} // namespace ir
} // namespace sw

#endif
