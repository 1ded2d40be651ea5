#include "CKernels.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

int odml_cpu_level(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
        return __builtin_cpu_supports("avx512vnni") ? ODML_LEVEL_AVX512_VNNI : ODML_LEVEL_AVX512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return ODML_LEVEL_AVX2;
#elif defined(__aarch64__) && defined(__linux__)
    // The kernel's hardware capabilities: HWCAP_ASIMDDP (bit 20 of AT_HWCAP), HWCAP2_I8MM (bit 13 of AT_HWCAP2).
    const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
    if (hwcap & (1UL << 20)) return hwcap2 & (1UL << 13) ? ODML_LEVEL_NEON_I8MM : ODML_LEVEL_NEON_DOTPROD;
#endif
    return ODML_LEVEL_PORTABLE;
}
