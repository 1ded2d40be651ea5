#include "CKernels.h"

int odml_cpu_level(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
        return __builtin_cpu_supports("avx512vnni") ? ODML_LEVEL_AVX512_VNNI : ODML_LEVEL_AVX512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return ODML_LEVEL_AVX2;
#endif
    return ODML_LEVEL_PORTABLE;
}
