// The int8 matrix product alone (core/qgemm.c) against the f32 one (core/kernels.c
// matmul_forward) on the Linear shapes of a forward pass: T rows in chunks of
// SF_CHUNK (64), as encoder.c runs them. Built like the shipped wasm files by
// bench/qgemm.mjs: emcc (SIMD128) and clang-16 (relaxed SIMD).
//
//   setup(T, K, N)  activations (T, K), weights (N, K) packed both ways, bias, outputs
//   f32(T, K, N, reps)    matmul_forward over the chunks
//   q8(T, K, N, reps)     q8_quantize_rows + q8_matmul_forward over the chunks
//   q8gemm(T, K, N, reps) q8_matmul_forward alone (rows quantized once in setup)
//   quant(T, K, reps)     q8_quantize_rows alone
//   check()               the wasm kernels' int32 results against a scalar int64
//                         reference on the documented layouts: 0 = exact, else the
//                         number of failing cases
//   maxerr(T, K, N)       max |q8 - f32| / max |f32| of the outputs after setup
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/encoder.h"
#include "../core/qgemm.h"

void emscripten_notify_memory_growth(size_t i) { (void)i; }

static float *x, *wf, *bias, *yf, *yq;
static void *wq, *xq;

static unsigned seed = 1;
static float rnd(void) { // in [-1, 1)
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / 8388608.0f - 1.0f;
}

__attribute__((export_name("setup"))) int setup(int T, int K, int N) {
    free(x), free(wf), free(bias), free(yf), free(yq), free(wq), free(xq);
    x = malloc(sizeof(float) * T * K), bias = malloc(sizeof(float) * N);
    yf = malloc(sizeof(float) * T * N), yq = malloc(sizeof(float) * T * N);
    float *w = malloc(sizeof(float) * N * K);
    wf = malloc(sizeof(float) * sf_packed_floats(N, K));
    wq = malloc(sf_q8_packed_bytes(N, K)), xq = malloc(sf_q8_act_bytes(T, K));
    if (!x || !bias || !yf || !yq || !w || !wf || !wq || !xq) return 0;
    // activations like a LayerNorm output (unit scale, a few outlier features), weights ~ 0.05
    for (int i = 0; i < T * K; i++) x[i] = rnd() * 1.7f * (i % K == 7 || i % K == 100 ? 8.0f : 1.0f);
    for (int i = 0; i < N * K; i++) w[i] = rnd() * 0.09f;
    for (int i = 0; i < N; i++) bias[i] = rnd() * 0.1f;
    pack_linear_f32(wf, w, N, K);
    q8_pack_linear_f32(wq, w, N, K);
    q8_quantize_rows(xq, x, K, T, K);
    free(w);
    return 1;
}

__attribute__((export_name("f32"))) float f32(int T, int K, int N, int reps) {
    for (int r = 0; r < reps; r++)
        for (int m = 0; m < T; m += SF_CHUNK) {
            int M = T - m < SF_CHUNK ? T - m : SF_CHUNK;
            matmul_forward(yf + (size_t)m * N, N, x + (size_t)m * K, K, wf, bias, M, K, N);
        }
    return yf[1];
}

__attribute__((export_name("q8"))) float q8(int T, int K, int N, int reps) {
    size_t rb = sf_q8_act_row_bytes(K);
    for (int r = 0; r < reps; r++)
        for (int m = 0; m < T; m += SF_CHUNK) {
            int M = T - m < SF_CHUNK ? T - m : SF_CHUNK;
            q8_matmul_forward_f32(yq + (size_t)m * N, N, x + (size_t)m * K, K, (char *)xq + m * rb, wq, bias, M, K, N);
        }
    return yq[1];
}

__attribute__((export_name("q8gemm"))) float q8gemm(int T, int K, int N, int reps) {
    size_t rb = sf_q8_act_row_bytes(K);
    for (int r = 0; r < reps; r++)
        for (int m = 0; m < T; m += SF_CHUNK) {
            int M = T - m < SF_CHUNK ? T - m : SF_CHUNK;
            q8_matmul_forward(yq + (size_t)m * N, N, (char *)xq + m * rb, wq, bias, M, K, N);
        }
    return yq[1];
}

__attribute__((export_name("quant"))) float quant(int T, int K, int reps) {
    for (int r = 0; r < reps; r++) q8_quantize_rows(xq, x, K, T, K);
    return ((float *)xq)[0];
}

__attribute__((export_name("maxerr"))) float maxerr(int T, int K, int N) {
    f32(T, K, N, 1), q8(T, K, N, 1);
    float e = 0, m = 0;
    for (int i = 0; i < T * N; i++) {
        float d = fabsf(yq[i] - yf[i]);
        e = d > e ? d : e, m = fabsf(yf[i]) > m ? fabsf(yf[i]) : m;
    }
    return e / m;
}

__attribute__((export_name("kernel"))) const char *kernel(void) { return q8_kernel_name(); }

// ---------------------------------------------------------------- exactness in wasm

// x_q of row m (the documented row layout: 16-byte head, then u7 bytes or i16 x_q - zp)
static int32_t xval(const unsigned char *row, int k) {
#if SF_Q8_AESIZE == 1
    int32_t zp;
    memcpy(&zp, row + 4, 4);
    return (int32_t)row[16 + k] - zp;
#else
    short v;
    memcpy(&v, row + 16 + 2 * k, 2);
    return v;
#endif
}

static int check_one(int M, int K, int N, int n0, int n1) {
    float *a = malloc(sizeof(float) * M * K), *w = malloc(sizeof(float) * N * K);
    void *pw = malloc(sf_q8_packed_bytes(N, K)), *pa = malloc(sf_q8_act_bytes(M, K));
    int8_t *q = malloc((size_t)N * K);
    float *s = malloc(sizeof(float) * N);
    int32_t *acc = malloc(sizeof(int32_t) * M * N);
    for (int i = 0; i < M * K; i++) a[i] = rnd() * (i % 7 == 3 ? 40.0f : 1.0f) + (i / K % 3 == 1 ? 2.0f : 0.0f);
    for (int i = 0; i < N * K; i++) w[i] = rnd();
    q8_pack_linear_f32(pw, w, N, K);
    q8_unpack_linear_i8(q, s, pw, N, K);
    q8_quantize_rows(pa, a, K, M, K);
    q8_matmul_i32(acc + n0, N, pa, q8_panel(pw, K, n0), M, K, n1 - n0);
    int bad = 0;
    size_t rb = sf_q8_act_row_bytes(K);
    for (int m = 0; m < M; m++)
        for (int n = n0; n < n1; n++) {
            long long want = 0;
            for (int k = 0; k < K; k++) want += (long long)xval((unsigned char *)pa + m * rb, k) * q[(size_t)n * K + k];
            bad |= want != acc[m * N + n];
        }
    free(a), free(w), free(pw), free(pa), free(q), free(s), free(acc);
    return bad;
}

__attribute__((export_name("check"))) int check(void) {
    static const int Ms[] = {1, 3, 4, 5, 6, 7, 13, 64};
    static const int Ks[] = {1, 2, 3, 5, 8, 17, 64, 383, 384, 1536};
    static const int Ns[] = {1, 7, 8, 9, 24, 100};
    int fails = 0;
    for (unsigned a = 0; a < sizeof Ms / sizeof *Ms; a++)
        for (unsigned b = 0; b < sizeof Ks / sizeof *Ks; b++)
            for (unsigned c = 0; c < sizeof Ns / sizeof *Ns; c++) {
                int N = Ns[c];
                fails += check_one(Ms[a], Ks[b], N, 0, N);
                if (N > 8) fails += check_one(Ms[a], Ks[b], N, 8, N - 1); // a sub-range of panels
            }
    return fails;
}
