/* One variant's table of kernels (core/isa.h): compiled once per instruction
 * set with the kernel files, so the names below are that variant's
 * (core/variant.h). Only in the native multi-ISA build. */
#if defined(SF_MULTI_ISA) && defined(SF_VARIANT)
#include "variant.h"

#include "isa.h"
#include "qgemm.h"

#define SF_STR_(x) #x
#define SF_STR(x)  SF_STR_(x)

const sf_kernels SF_V(sf_kernels) = {
    .name = SF_STR(SF_VARIANT),
    .lanes = SF_VW,
    .nr = SF_NR,
    .q8_amax = SF_Q8_AMAX,
    .packed_floats = sf_packed_floats,
    .pack_linear = pack_linear,
    .pack_linear_f32 = pack_linear_f32,
    .unpack_linear = unpack_linear,
    .gemm_forward = gemm_forward,
    .matmul_forward = matmul_forward,
    .embed_forward = embed_forward,
    .embed_add_forward = embed_add_forward,
    .residual_forward = residual_forward,
    .residual_scaled_forward = residual_scaled_forward,
    .scale_forward = scale_forward,
    .activation_forward = activation_forward,
    .attention_forward = attention_forward,
    .q8_panel_bytes = sf_q8_panel_bytes,
    .q8_packed_bytes = sf_q8_packed_bytes,
    .q8_pack_linear = q8_pack_linear,
    .q8_pack_linear_f32 = q8_pack_linear_f32,
    .q8_pack_linear_i8 = q8_pack_linear_i8,
    .q8_unpack_linear = q8_unpack_linear,
    .q8_unpack_linear_i8 = q8_unpack_linear_i8,
    .q8_act_row_bytes = sf_q8_act_row_bytes,
    .q8_act_bytes = sf_q8_act_bytes,
    .q8_quantize_rows = q8_quantize_rows,
    .q8_matmul_forward = q8_matmul_forward,
    .q8_matmul_forward_f32 = q8_matmul_forward_f32,
    .q8_kernel_name = q8_kernel_name,
    .q8_matmul_i32 = q8_matmul_i32,
};
#else
typedef int sf_isa_table_unused; /* ISO C: a translation unit has a declaration */
#endif
