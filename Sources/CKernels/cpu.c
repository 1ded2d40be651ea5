#include "CKernels.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>

/// Whether Apple's kernel reports the Arm feature `name` (`hw.optional.arm.FEAT_…`, macOS 12 and iOS 15 on).
static int odml_apple_feature(const char *name) {
    int value = 0;
    size_t size = sizeof value;
    return sysctlbyname(name, &value, &size, NULL, 0) == 0 && value != 0;
}
#endif

int odml_cpu_runs(int level) {
    if (level == ODML_LEVEL_PORTABLE) return 1;
#if defined(__x86_64__)
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                       && __builtin_cpu_supports("avx512vl");
    switch (level) {
    case ODML_LEVEL_AVX2: return avx2;
    case ODML_LEVEL_AVX_VNNI: return avx2 && __builtin_cpu_supports("avxvnni");
    case ODML_LEVEL_AVX512: return avx512;
    case ODML_LEVEL_AVX512_VNNI: return avx512 && __builtin_cpu_supports("avx512vnni");
    default: return 0;
    }
#elif defined(__aarch64__) && defined(__linux__)
    // The kernel's hardware capabilities: HWCAP_ASIMDDP (bit 20 of AT_HWCAP), HWCAP2_I8MM (bit 13 of AT_HWCAP2).
    const int dotprod = (getauxval(AT_HWCAP) & (1UL << 20)) != 0;
    switch (level) {
    case ODML_LEVEL_NEON_DOTPROD: return dotprod;
    case ODML_LEVEL_NEON_I8MM: return dotprod && (getauxval(AT_HWCAP2) & (1UL << 13)) != 0;
    default: return 0;
    }
#elif defined(__aarch64__) && defined(__APPLE__)
    // Apple's chips: dot products from the A13 and M1, i8mm from the A15 and M2.
    const int dotprod = odml_apple_feature("hw.optional.arm.FEAT_DotProd");
    switch (level) {
    case ODML_LEVEL_NEON_DOTPROD: return dotprod;
    case ODML_LEVEL_NEON_I8MM: return dotprod && odml_apple_feature("hw.optional.arm.FEAT_I8MM");
    default: return 0;
    }
#else
    return 0;
#endif
}

int odml_cpu_level(void) {
    // Best first: the 512-bit levels, then AVX-VNNI over plain AVX2; i8mm over dotprod.
    static const int order[] = {ODML_LEVEL_AVX512_VNNI, ODML_LEVEL_AVX512, ODML_LEVEL_AVX_VNNI, ODML_LEVEL_AVX2,
                                ODML_LEVEL_NEON_I8MM, ODML_LEVEL_NEON_DOTPROD};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (odml_cpu_runs(order[i])) return order[i];
    }
    return ODML_LEVEL_PORTABLE;
}
