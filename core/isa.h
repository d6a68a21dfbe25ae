/* The native build's kernels, one table per instruction set (as onnxruntime's
 * MLAS and simdjson dispatch): kernels.c and qgemm.c are compiled once per
 * variant (core/variant.h), each copy fills a table (core/isa_table.c), and
 * core/isa.c picks one at load from the CPU's own report (cpuid and xgetbv on
 * x86-64, getauxval on arm64). Every call of a kernel goes through the table
 * of the variant in use; the wasm builds have one variant and no table. */
#ifndef SF_ISA_H
#define SF_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

typedef struct sf_kernels {
    const char *name; /* "avx512-vnni", the SWAPFORMER_ISA spelling */
    int lanes;        /* SF_VW: float lanes of a vector */
    int nr;           /* SF_NR: columns of a packed panel (f32 and q8) */
    int q8_amax;      /* 127 (u7) or 255 (u8) activations */
    size_t (*packed_floats)(int N, int K);
    void (*pack_linear)(float *dst, const void *src, sf_load_fn load, int N, int K);
    void (*pack_linear_f32)(float *dst, const void *src, int N, int K);
    void (*unpack_linear)(float *w, const float *packed, int N, int K);
    void (*gemm_forward)(float *out, size_t ldo, const float *a, size_t lda, const float *b, size_t ldb, size_t bstep, const float *bias, int acc,
                         int M, int K, int N);
    void (*matmul_forward)(float *out, size_t ldo, const float *inp, size_t ldi, const float *wpacked, const float *bias, int M, int K, int N);
    void (*embed_forward)(float *x, const int32_t *ids, const float *tokens, float scale, int N, int C);
    void (*embed_add_forward)(float *x, const int32_t *ids, const float *table, int N, int C);
    void (*residual_forward)(float *x, const float *y, size_t n);
    void (*residual_scaled_forward)(float *x, const float *y, float a, size_t n);
    void (*scale_forward)(float *x, float s, size_t n);
    void (*activation_forward)(float *h, const float *g, int activation, size_t n);
    void (*attention_forward)(float *o, const float *q, const float *kv, float *scratch, float *att, size_t ldatt, const int32_t *perm,
                              const sf_attn *a, int h0, int h1, int i0, int R, int T);
    size_t (*q8_panel_bytes)(int K);
    size_t (*q8_packed_bytes)(int N, int K);
    void (*q8_pack_linear)(void *dst, const void *src, sf_load_fn load, int N, int K);
    void (*q8_pack_linear_f32)(void *dst, const float *w, int N, int K);
    void (*q8_pack_linear_i8)(void *dst, const int8_t *q, const void *scales, int N, int K);
    void (*q8_unpack_linear)(float *w, const void *packed, int N, int K);
    void (*q8_unpack_linear_i8)(int8_t *q, float *scales, const void *packed, int N, int K);
    size_t (*q8_act_row_bytes)(int K);
    size_t (*q8_act_bytes)(int M, int K);
    void (*q8_quantize_rows)(void *xq, const float *x, size_t ldx, int M, int K);
    void (*q8_matmul_forward)(float *out, size_t ldo, const void *xq, const void *wq, const float *bias, int M, int K, int N);
    void (*q8_matmul_forward_f32)(float *out, size_t ldo, const float *inp, size_t ldi, void *scratch, const void *wq, const float *bias, int M,
                                  int K, int N);
    const char *(*q8_kernel_name)(void);
    void (*q8_matmul_i32)(int32_t *acc, size_t lda, const void *xq, const void *wq, int M, int K, int N);
} sf_kernels;

/* The variants this binary has, best first (core/isa.c), and whether this CPU
 * (and its OS, for the wider registers) runs each. */
int sf_isa_count(void);
const char *sf_isa_name(int i);
int sf_isa_supported(int i);
/* Selects the best variant this CPU runs, or with name, that one (a lower one
 * for tests: SWAPFORMER_ISA). 0, or -1 when name is not a variant of this binary
 * or this CPU cannot run it. Call before any encoder exists: the packed weights
 * of one variant are not the layout of another; a second call naming another
 * variant is -1 (except in the test builds, -DSF_ISA_TESTING, which switch
 * between encoders). */
int sf_isa_select(const char *name);
/* The variant in use. */
const sf_kernels *sf_isa(void);
const char *sf_isa_current_name(void); /* "avx2", ...: the variant in use */

#endif
