/* The native build's choice of kernels (core/isa.h): which variants this
 * binary has, which this CPU runs, the table in use, and the kernel functions
 * of kernels.h and qgemm.h as calls through it. Only in the native multi-ISA
 * build (SF_MULTI_ISA); the wasm builds call the kernels directly.
 *
 * A variant runs where the CPU reports its instructions and the OS saves its
 * registers (XCR0, read with xgetbv: YMM for AVX2, opmask and ZMM for
 * AVX-512), as MLAS's platform.cpp and simdjson's isadetection.h check. No
 * IFUNC, no target_clones: they fail on musl and MinGW. */
#if defined(SF_MULTI_ISA)
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE under -std=c11 */
#include "isa.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "qgemm.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

/* A variant: its table, its name (SWAPFORMER_ISA's spelling) and the CPU features it needs. */
typedef struct {
    const sf_kernels *k;
    const char *name;
    unsigned needs;
} variant;

#if defined(__x86_64__)
extern const sf_kernels sf_kernels_sse2, sf_kernels_avx2, sf_kernels_avx2_vnni, sf_kernels_avx512, sf_kernels_avx512_vnni;

enum { F_AVX2 = 1, F_AVX_VNNI = 2, F_AVX512 = 4, F_AVX512_VNNI = 8 };

static unsigned cpu_features(void) {
    unsigned a, b, c, d, f = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !avx) return 0;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    int ymm = (lo & 6) == 6, zmm = (lo & 0xE6) == 0xE6; /* SSE + AVX state; + opmask, ZMM_Hi256, Hi16_ZMM */
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    int avx2 = (b >> 5) & 1, f512 = (b >> 16) & 1, dq = (b >> 17) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1, vnni512 = (c >> 11) & 1;
    unsigned a1, b1, c1, d1;
    __cpuid_count(7, 1, a1, b1, c1, d1);
    int avx_vnni = (a1 >> 4) & 1;
    if (ymm && avx2 && fma) f |= F_AVX2;
    if ((f & F_AVX2) && avx_vnni) f |= F_AVX_VNNI;
    if ((f & F_AVX2) && zmm && f512 && dq && bw && vl) f |= F_AVX512;
    if ((f & F_AVX512) && vnni512) f |= F_AVX512_VNNI;
    return f;
}

static const variant variants[] = {
    {&sf_kernels_avx512_vnni, "avx512-vnni", F_AVX512 | F_AVX512_VNNI},
    {&sf_kernels_avx512, "avx512", F_AVX512},
    {&sf_kernels_avx2_vnni, "avx2-vnni", F_AVX2 | F_AVX_VNNI},
    {&sf_kernels_avx2, "avx2", F_AVX2},
    {&sf_kernels_sse2, "sse2", 0},
};
#define BASELINE sf_kernels_sse2

#elif defined(__aarch64__)
extern const sf_kernels sf_kernels_neon, sf_kernels_dotprod, sf_kernels_i8mm;

enum { F_DOTPROD = 1, F_I8MM = 2 };

static unsigned cpu_features(void) {
#if defined(__linux__)
    unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    return ((hw & (1UL << 20)) ? F_DOTPROD : 0) | ((hw2 & (1UL << 13)) ? F_I8MM : 0); /* HWCAP_ASIMDDP, HWCAP2_I8MM */
#else
    return 0;
#endif
}

static const variant variants[] = {
    {&sf_kernels_i8mm, "i8mm", F_DOTPROD | F_I8MM},
    {&sf_kernels_dotprod, "dotprod", F_DOTPROD},
    {&sf_kernels_neon, "neon", 0},
};
#define BASELINE sf_kernels_neon

#else
#error "the native multi-ISA build knows x86-64 and arm64"
#endif

#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

size_t sf_alloc_limit = (size_t)0x7fffffff; /* core/error.h's SF_MAX_ALLOC natively: 2 GB until the addon sets it */

void *sf_calloc_big(size_t bytes) {
    void *p = calloc(1, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (p && hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: refused (no THP) changes nothing */
#endif
    return p;
}

static const sf_kernels *K = &BASELINE; /* the baseline until sf_isa_select */
int sf_nr = 2 * 4;                      /* K->nr */
static int chosen = -1;

int sf_isa_count(void) { return NVARIANTS; }
const char *sf_isa_name(int i) { return i >= 0 && i < NVARIANTS ? variants[i].name : NULL; }
int sf_isa_supported(int i) {
    static unsigned features;
    static int probed;
    if (!probed) features = cpu_features(), probed = 1;
    return i >= 0 && i < NVARIANTS && (variants[i].needs & features) == variants[i].needs;
}

int sf_isa_select(const char *name) {
    int pick = -1;
    for (int i = 0; i < NVARIANTS && pick < 0; i++)
        if (name ? !strcmp(name, variants[i].name) : sf_isa_supported(i)) pick = i;
    if (pick < 0 || !sf_isa_supported(pick)) return -1;
#ifndef SF_ISA_TESTING                            /* the sanitizer and fuzz builds switch between encoders, never under one */
    if (chosen >= 0 && chosen != pick) return -1; /* once per process: packed weights follow the variant */
#endif
    chosen = pick;
    K = variants[pick].k;
    sf_nr = K->nr;
    return 0;
}

const sf_kernels *sf_isa(void) { return K; }
const char *sf_isa_current_name(void) { return chosen >= 0 ? variants[chosen].name : variants[NVARIANTS - 1].name; }

/* ---------------------------------------------------------------- kernels.h, qgemm.h through K */

size_t sf_packed_floats(int N, int K_) { return K->packed_floats(N, K_); }
void pack_linear(float *dst, const void *src, sf_load_fn load, int N, int K_) { K->pack_linear(dst, src, load, N, K_); }
void pack_linear_f32(float *dst, const void *src, int N, int K_) { K->pack_linear_f32(dst, src, N, K_); }
void unpack_linear(float *w, const float *packed, int N, int K_) { K->unpack_linear(w, packed, N, K_); }
void gemm_forward(float *out, size_t ldo, const float *a, size_t lda, const float *b, size_t ldb, size_t bstep, const float *bias, int acc, int M,
                  int K_, int N) {
    K->gemm_forward(out, ldo, a, lda, b, ldb, bstep, bias, acc, M, K_, N);
}
void matmul_forward(float *out, size_t ldo, const float *inp, size_t ldi, const float *wpacked, const float *bias, int M, int K_, int N) {
    K->matmul_forward(out, ldo, inp, ldi, wpacked, bias, M, K_, N);
}
void embed_forward(float *x, const int32_t *ids, const float *tokens, float scale, int N, int C) { K->embed_forward(x, ids, tokens, scale, N, C); }
void embed_add_forward(float *x, const int32_t *ids, const float *table, int N, int C) { K->embed_add_forward(x, ids, table, N, C); }
void residual_forward(float *x, const float *y, size_t n) { K->residual_forward(x, y, n); }
void residual_scaled_forward(float *x, const float *y, float a, size_t n) { K->residual_scaled_forward(x, y, a, n); }
void scale_forward(float *x, float s, size_t n) { K->scale_forward(x, s, n); }
void activation_forward(float *h, const float *g, int activation, size_t n) { K->activation_forward(h, g, activation, n); }
void attention_forward(float *o, const float *q, const float *kv, float *scratch, float *att, size_t ldatt, const int32_t *perm, const sf_attn *a,
                       int h0, int h1, int i0, int R, int T) {
    K->attention_forward(o, q, kv, scratch, att, ldatt, perm, a, h0, h1, i0, R, T);
}
size_t sf_q8_panel_bytes(int K_) { return K->q8_panel_bytes(K_); }
size_t sf_q8_packed_bytes(int N, int K_) { return K->q8_packed_bytes(N, K_); }
void q8_pack_linear(void *dst, const void *src, sf_load_fn load, int N, int K_) { K->q8_pack_linear(dst, src, load, N, K_); }
void q8_pack_linear_f32(void *dst, const float *w, int N, int K_) { K->q8_pack_linear_f32(dst, w, N, K_); }
void q8_pack_linear_i8(void *dst, const int8_t *q, const void *scales, int N, int K_) { K->q8_pack_linear_i8(dst, q, scales, N, K_); }
void q8_unpack_linear(float *w, const void *packed, int N, int K_) { K->q8_unpack_linear(w, packed, N, K_); }
void q8_unpack_linear_i8(int8_t *q, float *scales, const void *packed, int N, int K_) { K->q8_unpack_linear_i8(q, scales, packed, N, K_); }
size_t sf_q8_act_row_bytes(int K_) { return K->q8_act_row_bytes(K_); }
size_t sf_q8_act_bytes(int M, int K_) { return K->q8_act_bytes(M, K_); }
void q8_quantize_rows(void *xq, const float *x, size_t ldx, int M, int K_) { K->q8_quantize_rows(xq, x, ldx, M, K_); }
void q8_matmul_forward(float *out, size_t ldo, const void *xq, const void *wq, const float *bias, int M, int K_, int N) {
    K->q8_matmul_forward(out, ldo, xq, wq, bias, M, K_, N);
}
void q8_matmul_forward_f32(float *out, size_t ldo, const float *inp, size_t ldi, void *scratch, const void *wq, const float *bias, int M, int K_,
                           int N) {
    K->q8_matmul_forward_f32(out, ldo, inp, ldi, scratch, wq, bias, M, K_, N);
}
const char *q8_kernel_name(void) { return K->q8_kernel_name(); }
void q8_matmul_i32(int32_t *acc, size_t lda, const void *xq, const void *wq, int M, int K_, int N) { K->q8_matmul_i32(acc, lda, xq, wq, M, K_, N); }

#else
typedef int sf_isa_unused; /* ISO C: a translation unit has a declaration */
#endif
