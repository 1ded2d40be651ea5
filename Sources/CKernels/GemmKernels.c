// Matrix products for builds with no BLAS library (see odml_sgemm in CKernels.h): C is computed in blocks of
// ODML_GEMM_MC × ODML_GEMM_NC over slices of ODML_GEMM_KC of the reduction, from copies of A and B packed
// contiguously (op(A) scaled by alpha), by a 4 × 16 register tile; a one-row product streams B unpacked, as sgemv.
#include "ODMLCommon.h"

/// Loads the first `count` lanes of `p` (all 8 when count ≥ 8), the others zero.
ODML_INLINE odml_v8f gemm_load8f_partial(const float *p, int count) {
    if (count >= 8) return odml_load8f(p);
    float lanes[8] = {0};
#pragma clang loop vectorize(disable) unroll(disable)
    for (int i = 0; i < count; i++) lanes[i] = p[i];
    return odml_load8f(lanes);
}

typedef struct {
    int transA, transB, m, n, k;
    float alpha;
    const float *a;
    ptrdiff_t lda;
    const float *b;
    ptrdiff_t ldb;
    float beta;
    float *c;
    ptrdiff_t ldc;
    float *work;
} gemm_args;

/// `R` rows (1…4) of C, columns j … j + count − 1 (count ≤ 16), gain Σ_p ap[r·kc + p] · bp[p·ldp + j…]: packed
/// A rows `kc` apart, packed B rows `ldp` apart and zero past the matrix's last column.
ODML_INLINE void gemm_tile(const float *ap, int kc, const float *bp, ptrdiff_t ldp, float *c, ptrdiff_t ldc,
                           int count, const int R) {
    odml_v8f acc[4][2];
#pragma clang loop unroll(full)
    for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = (odml_v8f)0;
    for (int p = 0; p < kc; p++) {
        const odml_v8f b0 = odml_load8f(bp + (ptrdiff_t)p * ldp), b1 = odml_load8f(bp + (ptrdiff_t)p * ldp + 8);
#pragma clang loop unroll(full)
        for (int r = 0; r < R; r++) {
            const float x = ap[(ptrdiff_t)r * kc + p];
            acc[r][0] += x * b0;
            acc[r][1] += x * b1;
        }
    }
#pragma clang loop unroll(full)
    for (int r = 0; r < R; r++) {
        float *row = c + (ptrdiff_t)r * ldc;
        odml_store8f_partial(row, gemm_load8f_partial(row, count) + acc[r][0], count);
        if (count > 8) odml_store8f_partial(row + 8, gemm_load8f_partial(row + 8, count - 8) + acc[r][1], count - 8);
    }
}

/// The floats of one packed slice of B: at most KC rows of at most NC columns rounded up to 16.
static ptrdiff_t gemm_packed_b_floats(int n, int k) {
    const int kc = k < ODML_GEMM_KC ? k : ODML_GEMM_KC, nc = n < ODML_GEMM_NC ? n : ODML_GEMM_NC;
    return (ptrdiff_t)kc * ((nc + 15) / 16 * 16);
}

ptrdiff_t odml_sgemm_work_floats(int m, int n, int k) {
    if (m <= 1 || n <= 0 || k <= 0) return 1;  // a one-row product packs nothing
    const int kc = k < ODML_GEMM_KC ? k : ODML_GEMM_KC, mc = m < ODML_GEMM_MC ? m : ODML_GEMM_MC;
    return gemm_packed_b_floats(n, k) + (ptrdiff_t)mc * kc;
}

typedef struct {
    const float *x, *y;
    int count;
    float *result;
} dot_args;

ODML_INLINE void sdot_impl(const dot_args *d) {
    odml_v8f s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 32 <= d->count; i += 32) {
        s0 += odml_load8f(d->x + i) * odml_load8f(d->y + i);
        s1 += odml_load8f(d->x + i + 8) * odml_load8f(d->y + i + 8);
        s2 += odml_load8f(d->x + i + 16) * odml_load8f(d->y + i + 16);
        s3 += odml_load8f(d->x + i + 24) * odml_load8f(d->y + i + 24);
    }
    for (; i < d->count; i += 8) {
        s0 += gemm_load8f_partial(d->x + i, d->count - i) * gemm_load8f_partial(d->y + i, d->count - i);
    }
    const odml_v8f s = (s0 + s1) + (s2 + s3);
    *d->result = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/// One row of C (m = 1): C += alpha · a · op(B) without packing, B's rows streamed once (B stored k × n) or one dot
/// product per column (B stored n × k), as BLAS's sgemv does it. A's row is `lda` apart when A is transposed.
ODML_INLINE void sgemv_impl(const gemm_args *g) {
    const int n = g->n, k = g->k;
    const ptrdiff_t step = g->transA ? g->lda : 1;
    float *c = g->c;
    if (!g->transB) {
        for (int p = 0; p < k; p++) {
            const float x = g->alpha * g->a[(ptrdiff_t)p * step];
            const float *row = g->b + (ptrdiff_t)p * g->ldb;
            int j = 0;
            for (; j + 8 <= n; j += 8) odml_store8f(c + j, odml_load8f(c + j) + x * odml_load8f(row + j));
            for (; j < n; j++) c[j] += x * row[j];
        }
    } else {
        for (int j = 0; j < n; j++) {
            const float *column = g->b + (ptrdiff_t)j * g->ldb;
            float sum = 0;
            if (step == 1) {
                const dot_args d = {g->a, column, k, &sum};
                sdot_impl(&d);
            } else {
                for (int p = 0; p < k; p++) sum += g->a[(ptrdiff_t)p * step] * column[p];
            }
            c[j] += g->alpha * sum;
        }
    }
}

ODML_INLINE void sgemm_impl(const gemm_args *g) {
    const int m = g->m, n = g->n, k = g->k;
    for (int i = 0; i < m; i++) {
        float *row = g->c + (ptrdiff_t)i * g->ldc;
        if (g->beta == 0) {
            for (int j = 0; j < n; j++) row[j] = 0;  // BLAS's rule: beta 0 ignores C, NaNs included
        } else if (g->beta != 1) {
            for (int j = 0; j < n; j++) row[j] *= g->beta;
        }
    }
    if (k == 0 || g->alpha == 0) return;
    if (m == 1) {
        sgemv_impl(g);
        return;
    }
    float *bp = g->work, *ap = g->work + gemm_packed_b_floats(n, k);
    for (int jc = 0; jc < n; jc += ODML_GEMM_NC) {
        const int nc = n - jc < ODML_GEMM_NC ? n - jc : ODML_GEMM_NC;
        const int ldp = (nc + 15) / 16 * 16;
        for (int pc = 0; pc < k; pc += ODML_GEMM_KC) {
            const int kc = k - pc < ODML_GEMM_KC ? k - pc : ODML_GEMM_KC;
            for (int p = 0; p < kc; p++) {
                float *to = bp + (ptrdiff_t)p * ldp;
                if (g->transB) {
                    const float *from = g->b + (ptrdiff_t)jc * g->ldb + pc + p;
                    for (int j = 0; j < nc; j++) to[j] = from[(ptrdiff_t)j * g->ldb];
                } else {
                    const float *from = g->b + (ptrdiff_t)(pc + p) * g->ldb + jc;
                    for (int j = 0; j < nc; j++) to[j] = from[j];
                }
                for (int j = nc; j < ldp; j++) to[j] = 0;
            }
            for (int ic = 0; ic < m; ic += ODML_GEMM_MC) {
                const int mc = m - ic < ODML_GEMM_MC ? m - ic : ODML_GEMM_MC;
                for (int i = 0; i < mc; i++) {
                    float *to = ap + (ptrdiff_t)i * kc;
                    if (g->transA) {
                        const float *from = g->a + (ptrdiff_t)pc * g->lda + ic + i;
                        for (int p = 0; p < kc; p++) to[p] = g->alpha * from[(ptrdiff_t)p * g->lda];
                    } else {
                        const float *from = g->a + (ptrdiff_t)(ic + i) * g->lda + pc;
                        for (int p = 0; p < kc; p++) to[p] = g->alpha * from[p];
                    }
                }
                for (int i = 0; i < mc; i += 4) {
                    const float *rows = ap + (ptrdiff_t)i * kc;
                    float *c = g->c + (ptrdiff_t)(ic + i) * g->ldc + jc;
                    for (int j = 0; j < nc; j += 16) {
                        const int count = nc - j < 16 ? nc - j : 16;
                        switch (mc - i) {
                        case 1: gemm_tile(rows, kc, bp + j, ldp, c + j, g->ldc, count, 1); break;
                        case 2: gemm_tile(rows, kc, bp + j, ldp, c + j, g->ldc, count, 2); break;
                        case 3: gemm_tile(rows, kc, bp + j, ldp, c + j, g->ldc, count, 3); break;
                        default: gemm_tile(rows, kc, bp + j, ldp, c + j, g->ldc, count, 4); break;
                        }
                    }
                }
            }
        }
    }
}

ODML_DISPATCH(sgemm, sgemm_impl, const gemm_args *)

void odml_sgemm(int transA, int transB, int m, int n, int k, float alpha, const float *a, ptrdiff_t lda,
                const float *b, ptrdiff_t ldb, float beta, float *c, ptrdiff_t ldc, float *work, int level) {
    const gemm_args args = {transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, work};
    sgemm_dispatch(&args, level);
}

ODML_DISPATCH(sdot, sdot_impl, const dot_args *)

float odml_sdot(const float *x, const float *y, int count, int level) {
    float result = 0;
    const dot_args args = {x, y, count, &result};
    sdot_dispatch(&args, level);
    return result;
}
