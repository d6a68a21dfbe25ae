/* config.head: the task head after the encoder, one small forward over the
 * last hidden states e->out (B, T, C) for every family and task (the family
 * tables in bindings/pretrained/heads.js map Hugging Face's heads onto it):
 *
 *   rows -> [head.dense + activation] -> [head.norm] -> head.out -> e->head_out
 *
 * head.dense maps C to the head's width W (dModel, or the embeddings' width
 * for a decoder tied to a narrower token table: ALBERT, RoFormer, ELECTRA's
 * generator); head.norm and head.out read W.
 *
 *   sequence  rows: one per sequence, row 0 ([CLS], <s>) or the mean of its rows;
 *             out (B, labels)                 (BERT's pooler + classifier, ...);
 *             'late': every real row through the head, then the mean of its
 *             logits (EuroBERT)
 *   token     rows: every token; out (B, T, labels), padded rows zero
 *   qa        the same with two labels: start and end logits (qa_outputs)
 *   colbert   the same, each row then L2-normalised (ColBERT's projection);
 *             with tokenWeights, column 0 a relu'd token weight and the rest
 *             the normalised vector (bge-m3's sparse_linear and colbert_linear)
 *   mlm       rows: the tokens in e->head_rows (b * T + t); out (R, V): the
 *             projection on the vocabulary, by head.out or, tied, by the token
 *             table itself (f32 rows, or q8 rows with a scale each), computed
 *             only for those rows, never as a (T, V) product. With
 *             SF_OUT_SPARSE, every token instead, pooled as it goes into one
 *             SPLADE vector a sequence, out (B, V).
 *
 * The Linear layers are the encoder's (packed, f32 or q8 panels, columns split
 * between threads); the tied projection splits the vocabulary between threads.
 * Raw logits: softmax, sigmoid and the rest are the tasks' (bindings/tasks/). */
#include "encoder.h"

#include "pool.h"
#include "sfmath.h"
#include "simd.h"

#include <math.h>
#include <string.h>

/* tanh(x) = 1 - 2 / (exp(2x) + 1), in vectors (v4_exp clamps, so |x| > 44 gives +-1). */
void sf_tanh_forward(float *x, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) v4_store(x + i, v4_splat(1.0f) - v4_splat(2.0f) / (v4_exp(v4_splat(2.0f) * v4_load(x + i)) + v4_splat(1.0f)));
    for (; i < n; i++) {
        float t[4] = {x[i], 0, 0, 0};
        v4 y = v4_splat(1.0f) - v4_splat(2.0f) / (v4_exp(v4_splat(2.0f) * v4_load(t)) + v4_splat(1.0f));
        x[i] = y[0];
    }
}

/* out (M, ldo), columns n0 .. n1-1 = a (M, K) . rows[n] + bias[n]: the projection
 * on a matrix kept by rows (the token table as the tied decoder, row stride
 * ldr), bias may be NULL; each output one dot product in a fixed order. It reads
 * the table once, so it runs at memory speed: built -Os with the cold code. */
static float dot_forward(const float *x, const float *y, int K) {
    v4 s0 = v4_zero(), s1 = v4_zero();
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        s0 = v4_madd(v4_load(x + k), v4_load(y + k), s0);
        s1 = v4_madd(v4_load(x + k + 4), v4_load(y + k + 4), s1);
    }
    for (; k + 4 <= K; k += 4) s0 = v4_madd(v4_load(x + k), v4_load(y + k), s0);
    float s = v4_sum(s0 + s1);
    for (; k < K; k++) s += x[k] * y[k];
    return s;
}

static void rowdot_forward(float *out, size_t ldo, const float *a, size_t lda, const float *rows, size_t ldr, const float *bias, int M, int K, int n0,
                           int n1) {
    for (int n = n0; n < n1; n++) { /* a row of the table once from memory, against every row of a */
        const float *r = rows + (size_t)n * ldr;
        float b = bias ? bias[n] : 0.0f;
        for (int m = 0; m < M; m++) out[(size_t)m * ldo + n] = dot_forward(a + (size_t)m * lda, r, K) + b;
    }
}

/* SPLADE's pooling of a chunk's logits: out[n] (one sequence's vector) <- the
 * max of the raw logits (log1p(relu) applied once at the end: it is monotone,
 * so it commutes with the max), or the sum of log1p(relu(logit)) (twice with
 * log2: opensearch's log1p_relu). A NaN logit stays NaN (the check after sees it). */
enum { FOLD_MAX = 1, FOLD_SUM, FOLD_SUM_LOG2 };

static float splade_act(float v, int log2) {
    double x = v > 0 || v != v ? (double)v : 0.0; /* relu, a NaN kept */
    x = sf_log1p(x);
    return (float)(log2 ? sf_log1p(x) : x);
}

typedef signed char i8x4 __attribute__((vector_size(4)));

static float dot_i8_forward(const float *x, const signed char *q, int K) {
    v4 s0 = v4_zero(), s1 = v4_zero();
    int k = 0;
    for (; k + 8 <= K; k += 8) {
        i8x4 a, b;
        memcpy(&a, q + k, 4);
        memcpy(&b, q + k + 4, 4);
        s0 = v4_madd(v4_load(x + k), __builtin_convertvector(a, v4), s0);
        s1 = v4_madd(v4_load(x + k + 4), __builtin_convertvector(b, v4), s1);
    }
    float s = v4_sum(s0 + s1);
    for (; k < K; k++) s += x[k] * (float)q[k];
    return s;
}

/* The same on int8 rows: row n = a float scale, then K int8 values (ldr floats a row). */
static void rowdot_q8_forward(float *out, size_t ldo, const float *a, size_t lda, const float *rows, size_t ldr, const float *bias, int M, int K,
                              int n0, int n1) {
    for (int n = n0; n < n1; n++) {
        const float *r = rows + (size_t)n * ldr;
        float b = bias ? bias[n] : 0.0f;
        for (int m = 0; m < M; m++) out[(size_t)m * ldo + n] = r[0] * dot_i8_forward(a + (size_t)m * lda, (const signed char *)(r + 1), K) + b;
    }
}

/* rows (M, ld) -> dense + activation -> norm, in e->head_mid (M, W); rows themselves when the head has neither. */
static const float *transform(sf_encoder *e, const float *rows, size_t ld, int M) {
    const sf_head_config *h = &e->cfg.head;
    int C = e->cfg.d_model, W = h->width; /* W = C without head.dense */
    if (!h->dense && !h->norm) return rows;
    float *y = e->head_mid; /* (M, W) */
    if (h->dense) {
        sf_encoder_linear(e, y, (size_t)W, rows, ld, e->head_dense_w, e->head_dense_b, M, C, W);
        if (h->activation == SF_HEAD_ACT_TANH)
            sf_tanh_forward(y, (size_t)M * W);
        else if (h->activation != SF_HEAD_ACT_IDENTITY)
            activation_forward(y, NULL, h->activation, (size_t)M * W);
    } else {
        for (int m = 0; m < M; m++) memcpy(y + (size_t)m * C, rows + (size_t)m * ld, sizeof(float) * (size_t)C);
    }
    if (h->norm) h->norm->forward(y, y, e->head_norm_w, e->head_norm_b, (float)h->norm_eps, M, W);
    return y;
}

/* The tied projection of M rows on the token table, vocabulary rows split between threads. */
typedef struct {
    sf_encoder *e;
    float *out;
    const float *a;
    int M, V;
} vocab_job;

static void vocab_task(void *ctx, int t, int n) {
    const vocab_job *j = ctx;
    const sf_encoder *e = j->e;
    int W = e->cfg.head.width, v0 = (int)((long long)j->V * t / n), v1 = (int)((long long)j->V * (t + 1) / n); /* W = embedDim, the table's */
    if (e->dtype == SF_DTYPE_Q8)
        rowdot_q8_forward(j->out, (size_t)j->V, j->a, (size_t)W, e->tokens, sf_q8_row_floats(W), e->head_out_b, j->M, W, v0, v1);
    else
        rowdot_forward(j->out, (size_t)j->V, j->a, (size_t)W, e->tokens, (size_t)W, e->head_out_b, j->M, W, v0, v1);
}

/* out (M, labels) = head.out(transform(rows)), rows (M, ld). */
static void head_rows_forward(sf_encoder *e, float *out, const float *rows, size_t ld, int M) {
    const sf_head_config *h = &e->cfg.head;
    int W = h->width;
    const float *x = transform(e, rows, ld, M);
    size_t xld = x == rows ? ld : (size_t)W;
    if (h->tied) {
        vocab_job j = {e, out, x, M, h->labels};
        int tasks = sf_pool_threads() * 4;
        if ((long long)M * W * h->labels < 65536) tasks = 1; /* as the matrix products: below this, one thread */
        sf_parallel(vocab_task, &j, tasks);
    } else {
        sf_encoder_linear(e, out, (size_t)h->labels, x, xld, e->head_out_w, e->head_out_b, M, W, h->labels);
    }
}

/* colbert rows (M, L): L2-normalised as torch's F.normalize (x / max(|x|, 1e-12));
 * with token weights, column 0 relu'd and the rest normalised. */
static void colbert_rows(float *y, int M, int L, int token_weights) {
    int k = token_weights ? 1 : 0;
    for (int m = 0; m < M; m++) {
        float *r = y + (size_t)m * L;
        if (k) r[0] = r[0] > 0 || r[0] != r[0] ? r[0] : 0.0f;
        double ss = 0;
        for (int i = k; i < L; i++) ss += (double)r[i] * r[i];
        double norm = sqrt(ss);
        float inv = (float)(1.0 / (norm > 1e-12 ? norm : 1e-12));
        for (int i = k; i < L; i++) r[i] *= inv;
    }
}

/* The tied projection of SPLADE's rows, transposed so that the kernels' GEMM
 * runs it: head_tmp (V, ldt) = E x^T, E the token table (V, W) as the GEMM's
 * left matrix, x^T (W, ldt) in head_in (the M rows, then zero columns to a
 * panel), the vocabulary split between threads. Four to eight times faster
 * than the dot products of head_rows_forward, which read each row once. */
typedef struct {
    sf_encoder *e;
    int ldt, M, V;
} tgemm_job;

static void tgemm_task(void *ctx, int t, int n) {
    const tgemm_job *j = ctx;
    int W = j->e->cfg.head.width, v0 = (int)((long long)j->V * t / n), v1 = (int)((long long)j->V * (t + 1) / n); /* W = embedDim, the table's */
    if (v0 < v1)
        gemm_forward(j->e->head_tmp + (size_t)v0 * j->ldt, (size_t)j->ldt, j->e->tokens + (size_t)v0 * W, (size_t)W, j->e->head_in, (size_t)j->ldt,
                     SF_NR, NULL, 0, v1 - v0, W, j->M);
}

/* SPLADE vectors: head_out (B, V), each sequence's tokens a chunk at a time,
 * their logits in head_tmp folded into the sequence's row: (V, ldt) from the
 * GEMM (tied, f32), (M, V) otherwise (q8 rows, or an untied head.out). */
static void sparse_forward(sf_encoder *e, int B, int T, int flags) {
    const sf_head_config *h = &e->cfg.head;
    int C = e->cfg.d_model, W = h->width, V = h->labels, log2 = (flags & SF_SPARSE_LOG2) != 0;
    int mode = !(flags & SF_SPARSE_SUM) ? FOLD_MAX : log2 ? FOLD_SUM_LOG2 : FOLD_SUM;
    int gemm = h->tied && e->dtype != SF_DTYPE_Q8;
    for (int b = 0; b < B; b++) {
        float *out = e->head_out + (size_t)b * V;
        for (int n = 0; n < V; n++) out[n] = mode == FOLD_MAX ? -INFINITY : 0.0f;
        for (int t = 0; t < e->lens[b]; t += SF_CHUNK) {
            int M = e->lens[b] - t < SF_CHUNK ? e->lens[b] - t : SF_CHUNK;
            const float *rows = e->out + ((size_t)b * T + t) * C;
            size_t sm = (size_t)V, sn = 1; /* head_tmp's strides: (M, V) */
            if (gemm) {
                const float *x = transform(e, rows, (size_t)C, M);
                size_t xld = x == rows ? (size_t)C : (size_t)W;
                int ldt = (M + SF_NR - 1) / SF_NR * SF_NR;
                for (int k = 0; k < W; k++)
                    for (int m = 0; m < ldt; m++) e->head_in[(size_t)k * ldt + m] = m < M ? x[(size_t)m * xld + k] : 0.0f;
                tgemm_job j = {e, ldt, M, V};
                int tasks = sf_pool_threads() * 4;
                if ((long long)M * W * V < 65536) tasks = 1;
                sf_parallel(tgemm_task, &j, tasks);
                sm = 1, sn = (size_t)ldt;
            } else
                head_rows_forward(e, e->head_tmp, rows, (size_t)C, M);
            for (int n = 0; n < V; n++) {
                float acc = out[n], bias = gemm && e->head_out_b ? e->head_out_b[n] : 0.0f;
                for (int m = 0; m < M; m++) {
                    float v = e->head_tmp[m * sm + n * sn] + bias;
                    acc = mode != FOLD_MAX ? acc + splade_act(v, log2) : v > acc || v != v ? v : acc;
                }
                out[n] = acc;
            }
        }
        if (mode == FOLD_MAX)
            for (int n = 0; n < V; n++) out[n] = splade_act(out[n], log2);
    }
}

int sf_head_forward(sf_encoder *e, int B, int T, int flags, sf_error *err) {
    const sf_head_config *h = &e->cfg.head;
    int C = e->cfg.d_model, L = h->labels;
    int late = h->task == SF_HEAD_SEQUENCE && h->pooling == SF_HEAD_POOL_LATE;
    size_t n = (size_t)(h->task == SF_HEAD_SEQUENCE ? B : sf_head_per_token(h->task) ? B * T : e->res_rows) * (size_t)L;
    if (flags & SF_OUT_SPARSE) {
        sparse_forward(e, B, T, flags);
        n = (size_t)B * L;
    } else if (h->task == SF_HEAD_SEQUENCE && !late) {
        for (int b0 = 0; b0 < B; b0 += SF_CHUNK) {
            int M = B - b0 < SF_CHUNK ? B - b0 : SF_CHUNK;
            for (int m = 0; m < M; m++) { /* head_in (M, C): each sequence's pooled row */
                const float *x = e->out + (size_t)(b0 + m) * T * C;
                float *p = e->head_in + (size_t)m * C;
                int n = e->lens[b0 + m];
                if (h->pooling == SF_HEAD_POOL_CLS)
                    memcpy(p, x, sizeof(float) * (size_t)C);
                else
                    for (int k = 0; k < C; k++) { /* the mean of the real rows, summed in double */
                        double s = 0;
                        for (int t = 0; t < n; t++) s += x[(size_t)t * C + k];
                        p[k] = (float)(s / n);
                    }
            }
            head_rows_forward(e, e->head_out + (size_t)b0 * L, e->head_in, (size_t)C, M);
        }
    } else if (sf_head_per_token(h->task) || late) { /* late: each chunk's logits in head_in, their mean in head_out (B, labels) */
        memset(e->head_out, 0, sizeof(float) * (size_t)B * (late ? 1 : T) * L);
        for (int b = 0; b < B; b++)
            for (int t = 0, nb = e->lens[b]; t < nb; t += SF_CHUNK) {
                int M = nb - t < SF_CHUNK ? nb - t : SF_CHUNK;
                float *y = late ? e->head_in : e->head_out + ((size_t)b * T + t) * L;
                head_rows_forward(e, y, e->out + ((size_t)b * T + t) * C, (size_t)C, M);
                if (late)
                    for (int m = 0; m < M; m++)
                        for (int k = 0; k < L; k++) e->head_out[(size_t)b * L + k] += y[(size_t)m * L + k] / (float)nb;
                if (h->task == SF_HEAD_COLBERT) colbert_rows(y, M, L, h->token_weights);
            }
    } else { /* mlm: the chosen rows, checked here: the bindings are not the only caller */
        int R = e->res_rows;
        for (int r = 0; r < R; r++) {
            int32_t i = e->head_rows[r];
            if (i < 0 || i >= B * T || i % T >= e->lens[i / T])
                return sf_fail(err, SF_BAD_ARGUMENT, "forward: head row %d (%d) is not a token of the batch", r, (int)i);
        }
        for (int r0 = 0; r0 < R; r0 += SF_CHUNK) {
            int M = R - r0 < SF_CHUNK ? R - r0 : SF_CHUNK;
            for (int m = 0; m < M; m++) memcpy(e->head_in + (size_t)m * C, e->out + (size_t)e->head_rows[r0 + m] * C, sizeof(float) * (size_t)C);
            head_rows_forward(e, e->head_out + (size_t)r0 * L, e->head_in, (size_t)C, M);
        }
    }
    static const char *const names[] = {"", "sequence", "token", "mlm", "qa", "colbert"};
    for (size_t k = 0; k < n; k++) {
        float v = e->head_out[k];
        if (v - v != 0)
            return sf_fail(err, SF_NON_FINITE, "forward: the %s head produced a non-finite logit (row %z, label %z): the weights overflow float32",
                           names[h->task], (long long)(k / L), (long long)(k % L));
    }
    return SF_OK;
}
