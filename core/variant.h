/* The kernel files (kernels.c, qgemm.c, isa_table.c) compiled for one
 * instruction set of the native build: build.sh compiles each once per
 * variant with -DSF_VARIANT=<name> and that variant's -m flags, and this header
 * gives every function they export the variant's suffix (gemm_forward ->
 * gemm_forward_avx2), so that the copies link side by side into one binary;
 * core/isa.c calls them through the table of the variant it picks. Without
 * SF_VARIANT (the wasm builds, the single-ISA native tests) it does nothing.
 *
 *   variant       SF_VW   q8 product
 *   sse2          4       pmaddwd on i16 activations (the SIMD128 scheme, u8)
 *   avx2          8       vpmaddubsw + vpmaddwd on u7 activations (the relaxed scheme)
 *   avx2_vnni     8       vpdpbusd (AVX-VNNI) on u8 activations
 *   avx512        16      vpmaddubsw + vpmaddwd on u7 activations (AVX-512 BW)
 *   avx512_vnni   16      vpdpbusd (AVX512-VNNI) on u8 activations
 *   neon          4       the SIMD128 scheme in C (u8)
 *   dotprod       4       sdot on u7 activations (the relaxed scheme)
 *   i8mm          4       usmmla on u8 activations, 8 k of two rows by two columns */
#ifndef SF_VARIANT_H
#define SF_VARIANT_H

#ifdef SF_VARIANT
/* the lanes of the vectors this variant's -m flags give */
#if defined(__AVX512F__)
#define SF_VW 16
#elif defined(__AVX2__)
#define SF_VW 8
#else
#define SF_VW 4
#endif
#define SF_V__(f, v) f##_##v
#define SF_V_(f, v)  SF_V__(f, v)
#define SF_V(f)      SF_V_(f, SF_VARIANT)
/* the f32 kernels' names: a variant that only adds an int8 instruction (avx2_vnni,
 * avx512_vnni, dotprod, i8mm) shares those of its width (-DSF_KVARIANT=avx2, ...) */
#ifndef SF_KVARIANT
#define SF_KVARIANT SF_VARIANT
#endif
#define SF_KV(f) SF_V_(f, SF_KVARIANT)

/* kernels.h */
#define sf_packed_floats        SF_KV(sf_packed_floats)
#define pack_linear             SF_KV(pack_linear)
#define pack_linear_f32         SF_KV(pack_linear_f32)
#define unpack_linear           SF_KV(unpack_linear)
#define gemm_forward            SF_KV(gemm_forward)
#define matmul_forward          SF_KV(matmul_forward)
#define embed_forward           SF_KV(embed_forward)
#define embed_add_forward       SF_KV(embed_add_forward)
#define residual_forward        SF_KV(residual_forward)
#define residual_scaled_forward SF_KV(residual_scaled_forward)
#define scale_forward           SF_KV(scale_forward)
#define activation_forward      SF_KV(activation_forward)
#define attention_forward       SF_KV(attention_forward)
/* qgemm.h */
#define sf_q8_panel_bytes     SF_V(sf_q8_panel_bytes)
#define sf_q8_packed_bytes    SF_V(sf_q8_packed_bytes)
#define q8_pack_linear        SF_V(q8_pack_linear)
#define q8_pack_linear_f32    SF_V(q8_pack_linear_f32)
#define q8_pack_linear_i8     SF_V(q8_pack_linear_i8)
#define q8_unpack_linear      SF_V(q8_unpack_linear)
#define q8_unpack_linear_i8   SF_V(q8_unpack_linear_i8)
#define sf_q8_act_row_bytes   SF_V(sf_q8_act_row_bytes)
#define sf_q8_act_bytes       SF_V(sf_q8_act_bytes)
#define q8_quantize_rows      SF_V(q8_quantize_rows)
#define q8_matmul_forward     SF_V(q8_matmul_forward)
#define q8_matmul_forward_f32 SF_V(q8_matmul_forward_f32)
#define q8_kernel_name        SF_V(q8_kernel_name)
#define q8_matmul_i32         SF_V(q8_matmul_i32)
#endif

#endif
