/** \file
 * Main-memory tensors on 128-byte lines, as a real Sunway program allocates them: the
 * networks' runner (network.h) and graph/'s executor keep their tensors so.
 */
#ifndef SW_NET_ALIGNED_H
#define SW_NET_ALIGNED_H

#include <cstddef>
#include <new>
#include <vector>

namespace sw_net {

/** Allocates at the start of a 128-byte line (cache-line alignment, as a real Sunway
 * program's main-memory tensors are): DMA moves whole lines (Machine::dma_line_bytes), so a
 * tensor off a line boundary costs every block of a request one more line. */
template <typename T> struct LineAlignedAllocator {
    using value_type = T;
    static constexpr std::size_t alignment = 128;
    LineAlignedAllocator() = default;
    template <typename U> LineAlignedAllocator(const LineAlignedAllocator<U> &) {}
    T *allocate(std::size_t n) {
        return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(alignment)));
    }
    void deallocate(T *p, std::size_t) { ::operator delete(p, std::align_val_t(alignment)); }
    template <typename U> bool operator==(const LineAlignedAllocator<U> &) const { return true; }
    template <typename U> bool operator!=(const LineAlignedAllocator<U> &) const { return false; }
};
/** A float tensor on whole lines. */
using AlignedFloats = std::vector<float, LineAlignedAllocator<float>>;

} // namespace sw_net

#endif
