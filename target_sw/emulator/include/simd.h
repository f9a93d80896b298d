/** \file
 * The SW26010 CPE SIMD intrinsics the generated code uses, on GCC vector extensions, for
 * the athread emulator. The real header comes with sw5cc (compile with -msimd); only the
 * subset below is provided:
 *   floatv4, doublev4                 256-bit registers of 4 lanes
 *   simd_load(v, p), simd_store(v, p) aligned (floatv4: 16 bytes; doublev4: 32 bytes)
 *   simd_loadu(v, p), simd_storeu(v, p) unaligned
 *   simd_set_floatv4(a, b, c, d)
 *   simd_vmad(a, b, c) = a * b + c, and the C operators + - * on vectors.
 * A misaligned simd_load/simd_store stops the run, as the hardware would fault.
 */
#ifndef ATHREAD_EMULATOR_SIMD_H
#define ATHREAD_EMULATOR_SIMD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef float floatv4 __attribute__((vector_size(16)));
typedef double doublev4 __attribute__((vector_size(32)));

static inline void simd_emu_check_aligned(const void *p, size_t alignment, const char *what) {
    if ((uintptr_t)p % alignment != 0) {
        fprintf(stderr, "athread emulator: error: %s at %p is not %u-byte aligned\n", what, p,
                (unsigned)alignment);
        fflush(stderr);
        abort();
    }
}

#define simd_loadu(v, p) memcpy(&(v), (p), sizeof(v))
#define simd_storeu(v, p) memcpy((p), &(v), sizeof(v))
#define simd_load(v, p) \
    (simd_emu_check_aligned((p), sizeof(v) == 16 ? 16 : 32, "simd_load"), simd_loadu(v, p))
#define simd_store(v, p) \
    (simd_emu_check_aligned((p), sizeof(v) == 16 ? 16 : 32, "simd_store"), simd_storeu(v, p))

static inline floatv4 simd_set_floatv4(float a, float b, float c, float d) {
    floatv4 v = {a, b, c, d};
    return v;
}

#define simd_vmad(a, b, c) ((a) * (b) + (c))

#endif
