// The matrix products alone: swapformer's own matmul_forward (core/kernels.c)
// on the Linear shapes of a forward pass, in chunks of SF_CHUNK rows as
// encoder.c runs them, so the benchmark can put them next to the peak.
// Built like the shipped wasm files: emcc (SIMD) and clang-16 (relaxed SIMD).
//
//   setup(T, C, F)     weights and activations for one layer of dModel C, ffDim F
//   run(T, C, F, reps) q, k, v, o (C x C), up (F x C), down (C x F) for T rows, reps times
#include <stdlib.h>

#include "../core/encoder.h"

void emscripten_notify_memory_growth(size_t i) { (void)i; }

static float *x, *y, *h, *w[4], *wup, *wdown, *bias; // w: q, k, v, o

static float *fill(size_t n) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
    return p;
}

__attribute__((export_name("setup"))) int setup(int T, int C, int F) {
    x = fill((size_t)T * C), y = fill((size_t)T * C), h = fill((size_t)T * F), bias = fill((size_t)F);
    for (int k = 0; k < 4; k++) w[k] = fill(sf_packed_floats(C, C));
    wup = fill(sf_packed_floats(F, C)), wdown = fill(sf_packed_floats(C, F));
    return x && y && h && bias && w[0] && w[1] && w[2] && w[3] && wup && wdown;
}

__attribute__((export_name("run"))) float run(int T, int C, int F, int reps) {
    for (int r = 0; r < reps; r++)
        for (int m = 0; m < T; m += SF_CHUNK) {
            int M = T - m < SF_CHUNK ? T - m : SF_CHUNK;
            for (int k = 0; k < 4; k++) matmul_forward(y + (size_t)m * C, C, x + (size_t)m * C, C, w[k], bias, M, C, C);
            matmul_forward(h + (size_t)m * F, F, x + (size_t)m * C, C, wup, bias, M, C, F);
            matmul_forward(y + (size_t)m * C, C, h + (size_t)m * F, F, wdown, bias, M, F, C);
        }
    return y[1];
}
