/* The int8 matrix product alone (core/qgemm.c), against plain references written
 * here: weight and activation quantizers from qgemm.h's formulas (with
 * nearbyintf, not the kernels' magic-number rounding), int64 dot products, a
 * double-precision f32 matmul.
 *
 *   - packing: w_q and s_w exactly the reference's, unpack/pack_i8 round trips
 *   - activations: s_a, zp and every x_q exactly the reference's; |x - s_a (x_q - zp)| <= s_a / 2
 *   - accumulators (q8_matmul_i32): exactly sum_k (x_q - zp) w_q, in int64, for
 *     M 1..70, K 1..1000 (odd, not a multiple of the interleave), N 1..100 (partial panels)
 *   - outputs: bit-identical to the epilogue's formula on the reference integers
 *     ((float)acc * (s_a s_w) + bias, unfused), any panel sub-range and any row
 *     block giving the same bits as the whole product
 *   - against the float matmul: |y_q8 - y| <= sum_k |x - x^| |w| + |x^| |w - w^|,
 *     with |x - x^| <= s_a / 2, |w - w^| <= s_w / 2 (plus float rounding)
 *   - edges: all-zero rows (weights, activations), huge (1e38) and tiny
 *     (1e-38, subnormal) values, one-signed rows (zp = 0 and zp = AMAX), values
 *     at the clamp edges, K = SF_Q8_MAX_K at full scale (the int32 bound),
 *     NaN / infinity -> NaN outputs, size overflow -> 0
 * Built twice by ./build.sh sanitize (ASan + UBSan): as the SIMD128 build quantizes
 * (u8, k pairs) and with -DSF_Q8_EMULATE_RELAXED as the relaxed build does (u7, k quads).
 *
 *   qgemm            prints one line per failure and a summary; exit 1 on failure */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/variant.h" /* built per native variant too (-DSF_VARIANT): the names of that variant */

#include "../../core/qgemm.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void) { /* in [-1, 1) */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

static int failures, cases;
#define FAIL(...) (failures++ < 40 ? (void)printf("FAIL: " __VA_ARGS__) : (void)0)

/* ---------------------------------------------------------------- references */

typedef struct {
    float s;
    int32_t zp;
} rowq;

/* qgemm.h's activation quantizer, written plainly. */
static rowq ref_quantize_row(int32_t *q, const float *x, int K) {
    float lo = 0, hi = 0;
    int bad = 0;
    for (int k = 0; k < K; k++) {
        if (!isfinite(x[k]))
            bad = 1;
        else
            lo = x[k] < lo ? x[k] : lo, hi = x[k] > hi ? x[k] : hi;
    }
    rowq r = {hi / (float)SF_Q8_AMAX - lo / (float)SF_Q8_AMAX, 0};
    float inv = 0;
    if (bad)
        r.s = NAN;
    else if (!(r.s >= FLT_MIN))
        r.s = 0;
    else {
        inv = 1.0f / r.s;
        float z = -lo * inv;
        r.zp = (int32_t)nearbyintf(z);
        if (r.zp > SF_Q8_AMAX) r.zp = SF_Q8_AMAX;
    }
    for (int k = 0; k < K; k++) {
        float t = x[k] * inv; /* then t + zp, exact in double, rounded half to even */
        double v = isfinite(x[k]) ? nearbyint((double)t + r.zp) : 0;
        q[k] = v < 0 ? 0 : v > SF_Q8_AMAX ? SF_Q8_AMAX : (int32_t)v;
        if (bad) q[k] = 0; /* not compared: the kernel's values there are unspecified */
    }
    return r;
}

/* The weight quantizer: s = amax / 127, w_q = round(w / s) in [-127, 127]. */
static float ref_quantize_weight(int8_t *q, const float *w, int K) {
    float amax = 0;
    int bad = 0;
    for (int k = 0; k < K; k++) {
        if (!isfinite(w[k]))
            bad = 1;
        else if (fabsf(w[k]) > amax)
            amax = fabsf(w[k]);
    }
    float s = amax / 127.0f;
    if (bad) {
        memset(q, 0, (size_t)K);
        return NAN;
    }
    if (!(s > 0)) {
        memset(q, 0, (size_t)K);
        return 0;
    }
    for (int k = 0; k < K; k++) {
        float v = nearbyintf(w[k] / s);
        q[k] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
    return s;
}

static float row_scale(const void *xq, int K, int m) {
    float s;
    memcpy(&s, (const unsigned char *)xq + (size_t)m * sf_q8_act_row_bytes(K), 4);
    return s;
}
static int32_t row_zp(const void *xq, int K, int m) {
    int32_t z;
    memcpy(&z, (const unsigned char *)xq + (size_t)m * sf_q8_act_row_bytes(K) + 4, 4);
    return z;
}
/* x_q of row m, k, from the documented row layout */
static int32_t row_value(const void *xq, int K, int m, int k) {
    const unsigned char *v = (const unsigned char *)xq + (size_t)m * sf_q8_act_row_bytes(K) + 16;
#if SF_Q8_AESIZE == 1
    return v[k];
#else
    int16_t t;
    memcpy(&t, v + 2 * (size_t)k, 2);
    return t + row_zp(xq, K, m); /* stored x_q - zp */
#endif
}

static int same_bits(float a, float b) { return memcmp(&a, &b, 4) == 0; }

/* ---------------------------------------------------------------- one product */

/* x (M, K) with row stride ldx, w (N, K), bias (N) or NULL. */
static void check(const char *what, const float *x, size_t ldx, const float *w, const float *bias, int M, int K, int N, int check_f32) {
    cases++;
    size_t wb = sf_q8_packed_bytes(N, K), ab = sf_q8_act_bytes(M, K);
    unsigned char *wq = malloc(wb), *xq = malloc(ab ? ab : 1), *xq2 = malloc(ab ? ab : 1);
    int8_t *qw = malloc((size_t)N * K), *qw2 = malloc((size_t)N * K);
    float *sw = malloc(sizeof(float) * N), *sw2 = malloc(sizeof(float) * N);
    int32_t *qx = malloc(sizeof(int32_t) * M * K), *acc = malloc(sizeof(int32_t) * M * N);
    rowq *rq = malloc(sizeof(rowq) * (M ? M : 1));
    float *out = malloc(sizeof(float) * M * N), *out2 = malloc(sizeof(float) * M * N), *wd = malloc(sizeof(float) * N * K);
    int bad = 0;

    /* weights: the reference's bytes and scales; unpack; the i8 round trip */
    q8_pack_linear_f32(wq, w, N, K);
    q8_unpack_linear_i8(qw, sw, wq, N, K);
    for (int n = 0; n < N; n++) {
        float s = ref_quantize_weight(qw2 + (size_t)n * K, w + (size_t)n * K, K);
        sw2[n] = s;
        if (!same_bits(s, sw[n]) && !(s != s && sw[n] != sw[n])) {
            if (!bad++) FAIL("%s M=%d K=%d N=%d: weight scale %d: %g, want %g\n", what, M, K, N, n, sw[n], s);
        }
    }
    if (memcmp(qw, qw2, (size_t)N * K)) {
        if (!bad++) FAIL("%s M=%d K=%d N=%d: quantized weights differ\n", what, M, K, N);
    }
    q8_unpack_linear(wd, wq, N, K);
    for (size_t i = 0; i < (size_t)N * K; i++)
        if (!same_bits(wd[i], (float)qw2[i] * sw2[i / K]) && sw2[i / K] == sw2[i / K]) {
            if (!bad++) FAIL("%s: unpack %zu\n", what, i);
            break;
        }
    {
        unsigned char *wq2 = malloc(wb);
        q8_pack_linear_i8(wq2, qw, sw, N, K);
        if (memcmp(wq, wq2, wb)) {
            if (!bad++) FAIL("%s M=%d K=%d N=%d: pack_i8(unpack_i8) differs\n", what, M, K, N);
        }
        memset(wq2, 0xAB, wb); /* streamed in chunks of whole panels, as a model file loads */
        for (int n0 = 0, step = SF_Q8_NR; n0 < N; n0 += step, step = SF_Q8_NR * (1 + step / SF_Q8_NR * 2 % 5)) { /* 1, 3, 2, 5, 1, ... panels */
            int n = N - n0 < step ? N - n0 : step;
            q8_pack_linear_f32(wq2 + (size_t)(n0 / SF_Q8_NR) * sf_q8_panel_bytes(K), w + (size_t)n0 * K, n, K);
        }
        if (memcmp(wq, wq2, wb)) {
            if (!bad++) FAIL("%s M=%d K=%d N=%d: packing in chunks differs\n", what, M, K, N);
        }
        free(wq2);
    }

    /* activations */
    q8_quantize_rows(xq, x, ldx, M, K);
    for (int m = 0; m < M; m++) {
        rq[m] = ref_quantize_row(qx + (size_t)m * K, x + m * ldx, K);
        float s = row_scale(xq, K, m);
        if (!same_bits(s, rq[m].s) && !(s != s && rq[m].s != rq[m].s)) {
            if (!bad++) FAIL("%s M=%d K=%d N=%d: row %d scale %g, want %g\n", what, M, K, N, m, s, rq[m].s);
        }
        if (row_zp(xq, K, m) != rq[m].zp) {
            if (!bad++) FAIL("%s M=%d K=%d N=%d: row %d zero point %d, want %d\n", what, M, K, N, m, row_zp(xq, K, m), rq[m].zp);
        }
        if (s != s) continue;
        for (int k = 0; k < K; k++) {
            int32_t v = row_value(xq, K, m, k), want = qx[(size_t)m * K + k];
            if (v != want) {
                if (!bad++) FAIL("%s M=%d K=%d N=%d: x_q[%d][%d] = %d, want %d (x = %.9g)\n", what, M, K, N, m, k, v, want, x[m * ldx + k]);
            }
            double err = fabs((double)x[m * ldx + k] - (double)s * (v - rq[m].zp));
            if (s > 0 && !(err <= 0.5001 * s)) {
                if (!bad++) FAIL("%s: x[%d][%d] = %g quantized with error %g > s_a/2 = %g\n", what, m, k, x[m * ldx + k], err, s / 2);
            }
        }
    }

    /* accumulators: exact */
    q8_matmul_i32(acc, (size_t)N, xq, wq, M, K, N);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            if (rq[m].s != rq[m].s) continue;
            int64_t want = 0;
            for (int k = 0; k < K; k++) want += (int64_t)(qx[(size_t)m * K + k] - rq[m].zp) * qw2[(size_t)n * K + k];
            if (want != acc[(size_t)m * N + n]) {
                if (!bad++) FAIL("%s M=%d K=%d N=%d: acc[%d][%d] = %d, want %lld\n", what, M, K, N, m, n, acc[(size_t)m * N + n], (long long)want);
            }
        }

    /* outputs: the epilogue's formula, bit for bit; NaN rows and columns NaN */
    q8_matmul_forward(out, (size_t)N, xq, wq, bias, M, K, N);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            float got = out[(size_t)m * N + n];
            if (rq[m].s != rq[m].s || sw2[n] != sw2[n]) {
                if (got == got) {
                    if (!bad++) FAIL("%s: out[%d][%d] = %g from a non-finite row, want NaN\n", what, m, n, got);
                }
                continue;
            }
            float f = (float)acc[(size_t)m * N + n] * (rq[m].s * sw2[n]);
            f = f + (bias ? bias[n] : 0.0f);
            if (!same_bits(got, f)) {
                if (!bad++) FAIL("%s M=%d K=%d N=%d: out[%d][%d] = %.9g, want %.9g\n", what, M, K, N, m, n, got, f);
            }
        }

    /* any panel range, any row block: the same bits */
    if (N > 1 || M > 1) {
        for (int i = 0; i < M * N; i++) out2[i] = -1;
        int panels = (N + SF_Q8_NR - 1) / SF_Q8_NR, p0 = 0, m0 = 0;
        while (p0 < panels) {
            int p1 = p0 + 1 + (int)((uniform() + 1) * 1.5), n0 = p0 * SF_Q8_NR, n1;
            if (p1 > panels) p1 = panels;
            n1 = p1 * SF_Q8_NR < N ? p1 * SF_Q8_NR : N;
            for (m0 = 0; m0 < M;) { /* rows in blocks of 1..7, quantized separately */
                int mb = 1 + (int)((uniform() + 1) * 3.5), rb = (int)sf_q8_act_row_bytes(K);
                if (m0 + mb > M) mb = M - m0;
                q8_quantize_rows(xq2 + (size_t)m0 * rb, x + (size_t)m0 * ldx, ldx, mb, K);
                q8_matmul_forward(out2 + (size_t)m0 * N + n0, (size_t)N, xq2 + (size_t)m0 * rb, q8_panel(wq, K, n0), bias ? bias + n0 : NULL, mb, K,
                                  n1 - n0);
                m0 += mb;
            }
            p0 = p1;
        }
        if (memcmp(out, out2, sizeof(float) * M * N)) {
            if (!bad++) FAIL("%s M=%d K=%d N=%d: sub-ranges differ from the whole\n", what, M, K, N);
        }
        q8_matmul_forward_f32(out2, (size_t)N, x, ldx, xq2, wq, bias, M, K, N);
        if (memcmp(out, out2, sizeof(float) * M * N)) {
            if (!bad++) FAIL("%s M=%d K=%d N=%d: q8_matmul_forward_f32 differs\n", what, M, K, N);
        }
    }

    /* against the float product: within the quantization bound */
    if (check_f32)
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double y = bias ? bias[n] : 0, bound = 0, mag = fabs(y), sa = rq[m].s, swn = sw2[n];
                for (int k = 0; k < K; k++) {
                    double xv = x[m * ldx + k], wv = w[(size_t)n * K + k], xh = sa * (qx[(size_t)m * K + k] - rq[m].zp);
                    y += xv * wv;
                    mag += fabs(xv * wv);
                    /* a row or column under the flush threshold counts as zero: its values are the error */
                    double ex = sa > 0 ? 0.5001 * sa : SF_Q8_AMAX * (double)FLT_MIN, ew = swn > 0 ? 0.5001 * swn : 127 * 0x1p-149;
                    bound += ex * fabs(wv) + fabs(xh) * ew;
                }
                double err = fabs(out[(size_t)m * N + n] - y), slack = 4e-7 * (mag + bound) + 1e-37;
                if (!(err <= bound + slack)) {
                    if (!bad++)
                        FAIL("%s M=%d K=%d N=%d: out[%d][%d] = %g, float %g: error %g over the bound %g\n", what, M, K, N, m, n,
                             out[(size_t)m * N + n], y, err, bound);
                }
            }

    free(wq), free(xq), free(xq2), free(qw), free(qw2), free(sw), free(sw2), free(qx), free(acc), free(rq), free(out), free(out2), free(wd);
}

static float *randoms(size_t n, double scale) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = (float)(uniform() * scale);
    return p;
}

/* ---------------------------------------------------------------- cases */

static void shapes(void) {
    static const int Ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 13, 64, 65, 70};
    static const int Ks[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 127, 384, 385, 999, 1000};
    static const int Ns[] = {1, 3, 7, 8, 9, 15, 16, 17, 31, 64, 100};
    for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
        for (size_t b = 0; b < sizeof Ks / sizeof *Ks; b++)
            for (size_t c = 0; c < sizeof Ns / sizeof *Ns; c++) {
                int M = Ms[a], K = Ks[b], N = Ns[c];
                if ((size_t)M * K * N > 2000000 && (a + b + c) % 3) continue; /* the biggest: one in three */
                size_t ldx = (size_t)K + (a + c) % 3;                         /* a row stride past K sometimes */
                float *x = randoms(M * ldx, 3.0), *w = randoms((size_t)N * K, 0.1), *bias = (b + c) % 2 ? randoms(N, 1.0) : NULL;
                /* a realistic touch: a few outlier features, some one-signed rows (zp at its ends) */
                for (int m = 0; m < M; m++) {
                    if (K > 8) x[m * ldx + 5] *= 10;
                    if (m % 5 == 1)
                        for (int k = 0; k < K; k++) x[m * ldx + k] = fabsf(x[m * ldx + k]);
                    if (m % 7 == 2)
                        for (int k = 0; k < K; k++) x[m * ldx + k] = -fabsf(x[m * ldx + k]);
                }
                check("shapes", x, ldx, w, bias, M, K, N, 1);
                free(x), free(w), free(bias);
            }
}

static void edges(void) {
    enum { M = 9, K = 37, N = 19 };
    float *x = randoms((size_t)M * K, 1.0), *w = randoms((size_t)N * K, 1.0), *bias = randoms(N, 1.0);
    /* all-zero rows and columns */
    for (int k = 0; k < K; k++) x[1 * K + k] = 0, w[(size_t)3 * K + k] = 0, w[(size_t)17 * K + k] = 0;
    /* huge, tiny, subnormal */
    for (int k = 0; k < K; k++) x[2 * K + k] *= 3e38f, x[3 * K + k] *= 1e-38f, x[4 * K + k] = (float)(k % 3) * 1e-45f;
    for (int k = 0; k < K; k++) w[(size_t)5 * K + k] *= 3e38f, w[(size_t)6 * K + k] *= 1e-38f, w[(size_t)7 * K + k] = (float)(k % 5) * 1.4e-45f;
    /* clamp edges: a row of the two ends and the zero point */
    for (int k = 0; k < K; k++) x[5 * K + k] = k % 3 == 0 ? -1.0f : k % 3 == 1 ? 2.0f : 0.0f;
    /* exact halves: x = (j + 0.5) s */
    for (int k = 0; k < K; k++) x[6 * K + k] = (float)(k - 3) * 0.5f + (k == 0 ? 0 : 0.25f);
    check("edges", x, K, w, bias, M, K, N, 0); /* the bound assumes no overflow: the float check below without the huge rows */
    for (int k = 0; k < K; k++) x[2 * K + k] *= 1e-30f, w[(size_t)5 * K + k] *= 1e-30f;
    check("edges (float)", x, K, w, bias, M, K, N, 1);
    /* non-finite rows and weights: NaN outputs there, the rest untouched */
    x[7 * K + 3] = NAN, x[8 * K + 4] = INFINITY, w[(size_t)9 * K + 2] = -INFINITY;
    check("non-finite", x, K, w, bias, M, K, N, 0);
    free(x), free(w), free(bias);

    /* K = SF_Q8_MAX_K at full scale: the int32 bound, both signs, and -128 weights from a file */
    int KM = SF_Q8_MAX_K;
    float *xm = malloc(sizeof(float) * 2 * KM), *wm = malloc(sizeof(float) * 2 * (size_t)KM);
    for (int k = 0; k < KM; k++) xm[k] = 1.0f, xm[KM + k] = -1.0f, wm[k] = 1.0f, wm[(size_t)KM + k] = -1.0f;
    check("max K", xm, KM, wm, NULL, 2, KM, 2, 1);
    {
        size_t wb = sf_q8_packed_bytes(1, KM);
        void *wq = malloc(wb), *xq = malloc(sf_q8_act_bytes(1, KM));
        int8_t *q = malloc((size_t)KM);
        float one = 1.0f;
        int32_t acc;
        memset(q, 0x80, (size_t)KM); /* -128 */
        q8_pack_linear_i8(wq, q, &one, 1, KM);
        q8_quantize_rows(xq, xm, KM, 1, KM); /* x_q - zp = AMAX */
        q8_matmul_i32(&acc, 1, xq, wq, 1, KM, 1);
        cases++;
        if (acc != -128 * SF_Q8_AMAX * KM) FAIL("max K, -128 weights: %d, want %d\n", acc, -128 * SF_Q8_AMAX * KM);
        free(wq), free(xq), free(q);
    }
    free(xm), free(wm);

    /* sizes */
    cases++;
    if (sf_q8_packed_bytes(1, SF_Q8_MAX_K + 1) || sf_q8_packed_bytes(0, 5) || sf_q8_packed_bytes(5, 0) || sf_q8_act_bytes(1, SF_Q8_MAX_K + 1) ||
        sf_q8_act_bytes(-1, 4) ||
        sf_q8_packed_bytes(0x7fffffff, SF_Q8_MAX_K) !=
            (sizeof(size_t) > 4 ? ((size_t)0x7fffffff + SF_Q8_NR - 1) / SF_Q8_NR * sf_q8_panel_bytes(SF_Q8_MAX_K) : 0) ||
        sf_q8_act_bytes(0x7fffffff, 65536) != (sizeof(size_t) > 4 ? (size_t)0x7fffffff * sf_q8_act_row_bytes(65536) : 0) ||
        sf_q8_act_bytes(0, 3) != 0)
        FAIL("size functions\n");
    if (sf_q8_panel_bytes(1) % 16 || sf_q8_panel_bytes(385) % 16 || sf_q8_act_row_bytes(1) % 16 || sf_q8_act_row_bytes(385) % 16)
        FAIL("sizes not multiples of 16\n");
}

int main(void) {
    shapes();
    edges();
    printf("q8 gemm (%s, %s: u%d activations, k %s, %d columns a panel): %d cases, %d failures\n", q8_kernel_name(), SF_Q8_BYTES ? "bytes" : "i16",
           SF_Q8_AMAX == 127 ? 7 : 8, SF_Q8_KR == 4 ? "quads" : "pairs", SF_Q8_NR, cases, failures);
    return failures ? 1 : 0;
}
