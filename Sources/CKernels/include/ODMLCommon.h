// Shared by the kernel files (CKernels' and CPreprocessing's): vector types, loads and stores, and the target
// attributes each level compiles with. Not part of the CKernels module Swift imports (see module.modulemap).
#ifndef ODML_COMMON_H
#define ODML_COMMON_H

#include "CKernels.h"

// Vector arguments and returns only pass between always-inline helpers, so the ABI note does not apply.
#pragma clang diagnostic ignored "-Wpsabi"

#define ODML_INLINE static inline __attribute__((always_inline))

typedef float odml_v8f __attribute__((ext_vector_type(8)));
typedef int32_t odml_v8i __attribute__((ext_vector_type(8)));

ODML_INLINE odml_v8f odml_load8f(const float *p) { odml_v8f v; __builtin_memcpy(&v, p, sizeof v); return v; }
ODML_INLINE void odml_store8f(float *p, odml_v8f v) { __builtin_memcpy(p, &v, sizeof v); }

/// Stores the first `count` lanes of `v` (all 8 when count ≥ 8): fixed-size copies (single stores), never a
/// call to memcpy.
ODML_INLINE void odml_store8f_partial(float *p, odml_v8f v, int count) {
    if (count >= 8) { odml_store8f(p, v); return; }
    if (count <= 0) return;
    float lanes[8];
    odml_store8f(lanes, v);
    int i = 0;
    if (count >= 4) { __builtin_memcpy(p, lanes, 16); i = 4; }
#pragma clang loop vectorize(disable) unroll(disable)
    for (; i < count; i++) p[i] = lanes[i];
}

#if defined(__x86_64__)
#define ODML_X86 1
#define ODML_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define ODML_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl")))
#define ODML_TARGET_VNNI __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))
#define ODML_TARGET_AVXVNNI __attribute__((target("avx2,fma,avxvnni")))
#else
#define ODML_X86 0
#endif

/// Whether `level` is an x86-64 level with AVX-512 (F, BW, VL), and one with AVX2 and FMA (every x86-64 level but
/// portable); an ARM64 level is neither.
ODML_INLINE int odml_level_avx512(int level) { return level == ODML_LEVEL_AVX512 || level == ODML_LEVEL_AVX512_VNNI; }
ODML_INLINE int odml_level_avx2(int level) {
    return level == ODML_LEVEL_AVX2 || level == ODML_LEVEL_AVX_VNNI || odml_level_avx512(level);
}

#if defined(__aarch64__)
#define ODML_ARM64 1
#define ODML_TARGET_DOTPROD __attribute__((target("dotprod")))
#define ODML_TARGET_I8MM __attribute__((target("dotprod,i8mm")))
#else
#define ODML_ARM64 0
#endif

/// Defines `name_portable`, `name_avx2`, `name_avx512` (on x86-64) around the always-inline body `impl`, and
/// `name(args, level)` that calls the one for `level` (AVX-VNNI's is AVX2's: only the 8-bit kernels differ).
#if ODML_X86
#define ODML_DISPATCH(name, impl, Args)                                                  \
    static void name##_portable(Args a) { impl(a); }                                     \
    ODML_TARGET_AVX2 static void name##_avx2(Args a) { impl(a); }                        \
    ODML_TARGET_AVX512 static void name##_avx512(Args a) { impl(a); }                    \
    static void name##_dispatch(Args a, int level) {                                     \
        if (odml_level_avx512(level)) name##_avx512(a);                                  \
        else if (odml_level_avx2(level)) name##_avx2(a);                                 \
        else name##_portable(a);                                                         \
    }
#else
#define ODML_DISPATCH(name, impl, Args)                                                  \
    static void name##_dispatch(Args a, int level) { (void)level; impl(a); }
#endif

#endif
