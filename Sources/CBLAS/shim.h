// OpenBLAS's C interface (cblas_sgemm, openblas_set_num_threads, ...).
// pkg-config `openblas` puts OpenBLAS's own include folder first, so this is OpenBLAS's cblas.h.
#include <cblas.h>
