/* What people do with embeddings next, in the core: similarity matrices,
 * top-k semantic search, Hamming search over packed bits, and the scalar and
 * binary quantization of sentence-transformers (util/similarity.py,
 * util/retrieval.py semantic_search, quantization.py quantize_embeddings).
 *
 *   sf_similarity_forward: out (M, N) = score(a_m, b_n)
 *   sf_search_forward:     the k best corpus rows of each query, by a score
 *   sf_hamming_search:     the same over packed bits, score = -Hamming distance
 *   sf_quantize_forward:   uint8 / int8 with per-dimension ranges, binary / ubinary bits
 *   sf_column_ranges_forward, sf_first_nonfinite: calibration ranges, the input check
 *
 * Scores: SF_SCORE_COS (rows normalised x / max(|x|, 1e-12), then dot),
 * SF_SCORE_DOT, SF_SCORE_EUCLID (-|a - b|_2) and SF_SCORE_MANHATTAN
 * (-|a - b|_1): negative distances, as sentence-transformers returns them.
 * Dot products run four accumulators of four lanes; each score is computed
 * the same way wherever it lands, so a query's scores do not depend on the
 * corpus' chunking. Sparse and multi-vector retrieval: core/retrieval.c. */
#include "search.h"

#include "simd.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static float dot(const float *x, const float *y, int D) {
    v4 s0 = v4_zero(), s1 = v4_zero(), s2 = v4_zero(), s3 = v4_zero();
    int k = 0;
    for (; k + 16 <= D; k += 16) {
        s0 = v4_madd(v4_load(x + k), v4_load(y + k), s0);
        s1 = v4_madd(v4_load(x + k + 4), v4_load(y + k + 4), s1);
        s2 = v4_madd(v4_load(x + k + 8), v4_load(y + k + 8), s2);
        s3 = v4_madd(v4_load(x + k + 12), v4_load(y + k + 12), s3);
    }
    for (; k + 4 <= D; k += 4) s0 = v4_madd(v4_load(x + k), v4_load(y + k), s0);
    float s = v4_sum((s0 + s1) + (s2 + s3));
    for (; k < D; k++) s += x[k] * y[k];
    return s;
}

static float distance(const float *x, const float *y, int D, int l1) {
    v4 s0 = v4_zero(), s1 = v4_zero();
    int k = 0;
    for (; k + 8 <= D; k += 8) {
        v4 d0 = v4_load(x + k) - v4_load(y + k), d1 = v4_load(x + k + 4) - v4_load(y + k + 4);
        if (l1)
            s0 += v4_max(d0, -d0), s1 += v4_max(d1, -d1);
        else
            s0 = v4_madd(d0, d0, s0), s1 = v4_madd(d1, d1, s1);
    }
    float s = v4_sum(s0 + s1);
    for (; k < D; k++) s += l1 ? fabsf(x[k] - y[k]) : (x[k] - y[k]) * (x[k] - y[k]);
    return l1 ? -s : -sqrtf(s);
}

void sf_inverse_norms_forward(float *inv, const float *a, int M, int D) {
    for (int m = 0; m < M; m++) {
        float n = sqrtf(dot(a + (size_t)m * D, a + (size_t)m * D, D));
        inv[m] = 1.0f / (n > 1e-12f ? n : 1e-12f);
    }
}

/* One score: a and b rows, ia and ib their inverse norms (cosine only). */
static float score(const float *a, const float *b, int D, int fn, float ia, float ib) {
    switch (fn) {
    case SF_SCORE_COS: return dot(a, b, D) * ia * ib;
    case SF_SCORE_EUCLID: return distance(a, b, D, 0);
    case SF_SCORE_MANHATTAN: return distance(a, b, D, 1);
    default: return dot(a, b, D);
    }
}

void sf_similarity_forward(float *out, const float *a, const float *inv_a, int M, const float *b, const float *inv_b, int N, int D, int fn) {
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++)
            out[(size_t)m * N + n] = score(a + (size_t)m * D, b + (size_t)n * D, D, fn, inv_a ? inv_a[m] : 1, inv_b ? inv_b[n] : 1);
}

/* A min-heap of (score, index) holding the k best so far: the root is the
 * worst kept, and a tie keeps the lower index (it counts as better). */
static int worse(float s1, int32_t i1, float s2, int32_t i2) { return s1 < s2 || (s1 == s2 && i1 > i2); }

static void sift_down(float *s, int32_t *ix, int n, int at) {
    for (int c; (c = 2 * at + 1) < n; at = c) {
        if (c + 1 < n && worse(s[c + 1], ix[c + 1], s[c], ix[c])) c++;
        if (!worse(s[c], ix[c], s[at], ix[at])) break;
        float ts = s[c];
        s[c] = s[at];
        s[at] = ts;
        int32_t ti = ix[c];
        ix[c] = ix[at];
        ix[at] = ti;
    }
}

void sf_heap_offer(float *s, int32_t *ix, int *n, int k, float v, int32_t i) {
    if (*n < k) { /* grow: sift the new leaf up */
        int at = (*n)++;
        s[at] = v, ix[at] = i;
        while (at > 0) {
            int p = (at - 1) / 2;
            if (!worse(s[at], ix[at], s[p], ix[p])) break;
            float ts = s[p];
            s[p] = s[at];
            s[at] = ts;
            int32_t ti = ix[p];
            ix[p] = ix[at];
            ix[at] = ti;
            at = p;
        }
    } else if (worse(s[0], ix[0], v, i)) {
        s[0] = v, ix[0] = i;
        sift_down(s, ix, k, 0);
    }
}

/* Pops the heap into descending order (best first) in place. */
void sf_heap_sort_desc(float *s, int32_t *ix, int n) {
    for (int end = n - 1; end > 0; end--) {
        float ts = s[0];
        s[0] = s[end];
        s[end] = ts;
        int32_t ti = ix[0];
        ix[0] = ix[end];
        ix[end] = ti;
        sift_down(s, ix, end, 0);
    }
}

void sf_search_forward(int32_t *idx, float *out, const float *q, const float *inv_q, int M, const float *corpus, const float *inv_c, int N, int D,
                       int k, int fn) {
    for (int m = 0; m < M; m++) {
        float *s = out + (size_t)m * k;
        int32_t *ix = idx + (size_t)m * k;
        int n = 0;
        const float *qm = q + (size_t)m * D;
        for (int c = 0; c < N; c++)
            sf_heap_offer(s, ix, &n, k, score(qm, corpus + (size_t)c * D, D, fn, inv_q ? inv_q[m] : 1, inv_c ? inv_c[c] : 1), c);
        sf_heap_sort_desc(s, ix, n);
    }
}

static int popcount8(uint32_t x) {
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (int)((((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
}

void sf_hamming_search(int32_t *idx, float *out, const uint8_t *q, int M, const uint8_t *corpus, int N, int bytes, int k) {
    for (int m = 0; m < M; m++) {
        float *s = out + (size_t)m * k;
        int32_t *ix = idx + (size_t)m * k;
        int n = 0;
        const uint8_t *qm = q + (size_t)m * bytes;
        for (int c = 0; c < N; c++) {
            const uint8_t *cr = corpus + (size_t)c * bytes;
            int d = 0, b = 0;
            for (; b + 4 <= bytes; b += 4) {
                uint32_t x, y;
                memcpy(&x, qm + b, 4);
                memcpy(&y, cr + b, 4);
                d += popcount8(x ^ y);
            }
            for (; b < bytes; b++) d += popcount8((uint32_t)(qm[b] ^ cr[b]));
            sf_heap_offer(s, ix, &n, k, (float)-d, c);
        }
        sf_heap_sort_desc(s, ix, n);
    }
}

/* Exponent bits all ones: NaN or an infinity. Blocks of 256 values OR'ed
 * branch-free (the compiler vectorizes them), then the block with one is searched. */
int sf_first_nonfinite(const float *x, int n) {
    const uint32_t *u = (const uint32_t *)(const void *)x;
    for (int b = 0; b < n; b += 256) {
        int e = n - b < 256 ? n : b + 256;
        uint32_t any = 0;
        for (int i = b; i < e; i++) any |= ((u[i] & 0x7F800000u) == 0x7F800000u);
        if (any)
            for (int i = b; i < e; i++)
                if ((u[i] & 0x7F800000u) == 0x7F800000u) return i;
    }
    return -1;
}

void sf_column_ranges_forward(float *lo, float *hi, const float *x, int M, int D) {
    for (int d = 0; d < D; d++) lo[d] = x[d], hi[d] = x[d];
    for (int m = 1; m < M; m++) {
        const float *r = x + (size_t)m * D;
        for (int d = 0; d < D; d++) {
            lo[d] = r[d] < lo[d] ? r[d] : lo[d];
            hi[d] = r[d] > hi[d] ? r[d] : hi[d];
        }
    }
}

/* numpy's float32 -> uint8 cast on x86: truncated toward zero to an integer,
 * then its low 8 bits (values past [0, 255] wrap, as astype does there). */
static uint8_t low_byte(float x) {
    double t = x < 0 ? ceil((double)x) : floor((double)x);
    if (!(t > -9.2e18 && t < 9.2e18)) return 0; /* never, for finite embeddings and ranges */
    return (uint8_t)((uint64_t)(int64_t)t & 0xFF);
}

void sf_quantize_forward(void *out, const float *x, int M, int D, int precision, const float *starts, const float *steps) {
    if (precision == SF_PREC_UINT8 || precision == SF_PREC_INT8) {
        uint8_t *o = out;
        for (int m = 0; m < M; m++)
            for (int d = 0; d < D; d++) {
                float v = (x[(size_t)m * D + d] - starts[d]) / steps[d]; /* float32, as numpy on float32 arrays */
                if (precision == SF_PREC_INT8) v = v - 128.0f;
                o[(size_t)m * D + d] = low_byte(v);
            }
        return;
    }
    uint8_t *o = out; /* binary, ubinary: np.packbits(x > 0), the first dimension in the top bit */
    int bytes = (D + 7) / 8;
    for (int m = 0; m < M; m++)
        for (int b = 0; b < bytes; b++) {
            unsigned v = 0;
            for (int j = 0; j < 8; j++) {
                int d = b * 8 + j;
                v = v << 1 | (d < D && x[(size_t)m * D + d] > 0);
            }
            o[(size_t)m * bytes + b] = (uint8_t)(precision == SF_PREC_BINARY ? v - 128u : v); /* (ubinary - 128) as int8 */
        }
}
