// The native backend's kernels against the native peak, one core: bench/native.mjs
// builds this file once per vector width with that width's flags (VW 4: SSE2; 8:
// -mavx2 -mfma; 16: -mavx512f) and links it with the native core's objects (every
// kernel variant, core/isa.c). A benchmark, not a test.
//
//   native-<width> peak            the FMA peak at VW lanes: N independent chains of
//                                  acc = acc * a + b (one fused op natively), best N
//   native-<width> kernels <isa> [T]  the core's kernels of variant <isa> on the Linear
//                                  shapes of MiniLM-L6 (384 -> 384, 384 -> 1536, 1536 -> 384)
//                                  and BERT-base (768, 3072), T rows (512) in 64-row chunks
//                                  as encoder.c runs them: f32 matmul_forward; q8 = quantize
//                                  the rows + q8_matmul_forward; best of the rounds
//
// Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID): other processes on a shared
// machine slow the wall clock, not this. Output: one JSON line.
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/isa.h"
#include "../core/qgemm.h"

#ifndef VW
#define VW 4
#endif
typedef float vec __attribute__((vector_size(VW * 4)));

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- peak */

#define DECL(i) vec x##i = (vec){0} + (1.0f + (float)(i)*0.01f);
#define STEP(i) x##i = x##i * a + b;
#define SUM(i)  s += x##i;
#define R4(M)   M(0) M(1) M(2) M(3)
#define R6(M)   R4(M) M(4) M(5)
#define R8(M)   R6(M) M(6) M(7)
#define R10(M)  R8(M) M(8) M(9)
#define R12(M)  R10(M) M(10) M(11)
#define R16(M)  R12(M) M(12) M(13) M(14) M(15)
#define R20(M)  R16(M) M(16) M(17) M(18) M(19)
#define R24(M)  R20(M) M(20) M(21) M(22) M(23)
#define PEAK(N)                                                                                                                                      \
    __attribute__((noinline)) static float peak##N(long iters, float av, float bv) {                                                                 \
        vec a = (vec){0} + av, b = (vec){0} + bv;                                                                                                    \
        R##N(DECL) for (long it = 0; it < iters; it++){R##N(STEP) R##N(STEP) R##N(STEP) R##N(STEP)} vec s = {0};                                     \
        R##N(SUM) return s[0] + s[VW - 1];                                                                                                           \
    }
PEAK(4)
PEAK(8)
PEAK(12)
PEAK(16)
#if VW == 16
PEAK(20)
PEAK(24)
#endif

static double time_peak(float (*f)(long, float, float), int n) {
    long iters = 2000000;
    volatile float sink = f(1000, 0.999f, 0.001f);
    double best = 1e30;
    for (int r = 0; r < 7; r++) {
        double t0 = cpu_now();
        sink += f(iters, 0.999f, 0.001f);
        double dt = cpu_now() - t0;
        if (dt < best) best = dt;
    }
    (void)sink;
    return (double)iters * 4 * n * VW * 2 / best * 1e-9; /* one fused op: 2 flops a lane */
}

static void run_peak(void) {
    float (*const fns[])(long, float, float) = {
        peak4,
        peak8,
        peak12,
        peak16,
#if VW == 16
        peak20,
        peak24
#endif
    };
    const int chains[] = {4, 8, 12, 16, 20, 24};
    double best = 0;
    int bestn = 0;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        double g = time_peak(fns[i], chains[i]);
        if (g > best) best = g, bestn = chains[i];
    }
    printf("{\"lanes\":%d,\"peakGflops\":%.2f,\"chains\":%d}\n", VW, best, bestn);
}

/* ---------------------------------------------------------------- the core's kernels */

static float *fill(size_t n, unsigned seed) {
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = (float)(((i + seed) * 2654435761u) % 1000) * 1e-3f - 0.5f;
    return p;
}

typedef struct {
    const char *name;
    int K, N;
} shape;

static void run_kernels(const char *isa, int T) {
    if (sf_isa_select(isa)) {
        printf("{\"error\":\"%s is not a variant this CPU runs\"}\n", isa);
        exit(2);
    }
    const struct {
        const char *model;
        int C, F;
    } models[] = {{"minilm", 384, 1536}, {"bert-base", 768, 3072}};
    printf("{\"isa\":\"%s\",\"q8\":\"%s\",\"T\":%d,\"shapes\":[", sf_isa_current_name(), q8_kernel_name(), T);
    int first = 1;
    for (int mi = 0; mi < 2; mi++) {
        int C = models[mi].C, F = models[mi].F;
        shape shapes[] = {{"C->C", C, C}, {"C->F", C, F}, {"F->C", F, C}};
        for (int si = 0; si < 3; si++) {
            int K = shapes[si].K, N = shapes[si].N;
            float *x = fill((size_t)T * K, 1), *out = malloc((size_t)T * N * sizeof(float)), *bias = fill((size_t)N, 2), *w = fill((size_t)N * K, 3);
            float *wp = malloc(sf_packed_floats(N, K) * sizeof(float));
            void *wq = malloc(sf_q8_packed_bytes(N, K)), *xq = malloc(sf_q8_act_bytes(64, K));
            pack_linear_f32(wp, w, N, K);
            q8_pack_linear_f32(wq, w, N, K);
            double best[2] = {1e30, 1e30};
            int rounds = T * (double)K * N > 1e9 ? 6 : 15;
            for (int r = 0; r < rounds; r++)
                for (int mode = 0; mode < 2; mode++) {
                    double t0 = cpu_now();
                    for (int m = 0; m < T; m += 64) {
                        int M = T - m < 64 ? T - m : 64;
                        if (mode == 0)
                            matmul_forward(out + (size_t)m * N, (size_t)N, x + (size_t)m * K, (size_t)K, wp, bias, M, K, N);
                        else
                            q8_matmul_forward_f32(out + (size_t)m * N, (size_t)N, x + (size_t)m * K, (size_t)K, xq, wq, bias, M, K, N);
                    }
                    double dt = cpu_now() - t0;
                    if (dt < best[mode]) best[mode] = dt;
                }
            double flops = 2.0 * T * K * N;
            printf("%s{\"model\":\"%s\",\"shape\":\"%s\",\"K\":%d,\"N\":%d,\"f32\":%.2f,\"q8\":%.2f}", first ? "" : ",", models[mi].model,
                   shapes[si].name, K, N, flops / best[0] * 1e-9, flops / best[1] * 1e-9);
            first = 0;
            free(x), free(out), free(bias), free(w), free(wp), free(wq), free(xq);
        }
    }
    printf("]}\n");
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "peak")) {
        run_peak();
        return 0;
    }
    if (argc > 2 && !strcmp(argv[1], "kernels")) {
        run_kernels(argv[2], argc > 3 ? atoi(argv[3]) : 512);
        return 0;
    }
    fprintf(stderr, "usage: %s peak | kernels <isa> [T]\n", argv[0]);
    return 2;
}
