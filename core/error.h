/* Error codes and messages.
 *
 * Every fallible function in the core returns one of these codes and fills an
 * sf_error with a message that names the offending field. The numbers are part
 * of the C ABI: bindings/index.js maps them to the stable string codes of
 * SwapformerError, so never renumber; only append. */
#ifndef SF_ERROR_H
#define SF_ERROR_H

#include <stddef.h>

enum {
    SF_OK = 0,
    SF_BAD_CONFIG = 1,         /* config JSON is malformed or inconsistent          */
    SF_BAD_FILE = 2,           /* model file is not a valid swapformer safetensors   */
    SF_BAD_WEIGHTS = 3,        /* a tensor is missing, unexpected, misshapen, non-finite */
    SF_BAD_TOKEN = 4,          /* a token id is outside [0, vocabSize)              */
    SF_SEQUENCE_TOO_LONG = 5,  /* longer than the position plugin can encode         */
    SF_OUT_OF_MEMORY = 6,      /* an allocation failed or a size overflowed          */
    SF_BAD_ARGUMENT = 7,       /* a call was made with arguments it cannot take       */
    SF_PLUGIN_EXISTS = 8,      /* a plugin of that kind and name is registered already */
    SF_NOT_FOUND = 9,          /* no such plugin / tensor                            */
    SF_BAD_PLUGIN = 10,        /* a plugin struct with a wrong api version or no name */
    SF_NON_FINITE = 11,        /* forward produced NaN or Infinity (weights or inputs overflow float32) */
    SF_UNSUPPORTED_MODEL = 12, /* a checkpoint this encoder cannot run (named field) */
};

#define SF_ERROR_MSG_CAP 320

typedef struct sf_error {
    int code;
    char msg[SF_ERROR_MSG_CAP];
} sf_error;

/* Sets err (if not NULL) and returns code. A tiny printf without stdio:
 * %s (const char *), %d (int), %z (long long), %g (double). The message is
 * truncated, never overflowed. */
int sf_fail(sf_error *err, int code, const char *fmt, ...);

/* Size arithmetic that reports overflow instead of wrapping. Return 0 on overflow. */
static inline int sf_mul_size(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > (size_t)-1 / a) return 0;
    *out = a * b;
    return 1;
}
static inline int sf_add_size(size_t a, size_t b, size_t *out) {
    if (b > (size_t)-1 - a) return 0;
    *out = a + b;
    return 1;
}

/* The largest single allocation the core makes: wasm memory stops at 2 GB
 * (-sMAXIMUM_MEMORY), and native builds refuse the same (as the fuzzers expect;
 * the emulated 32-bit runs lower it, as qemu-user leaves ASan little room). */
/* The largest single allocation of the core: 2 GB in wasm; natively (the addon)
 * a limit set at load, 3/4 of the machine's memory, so that a hostile config
 * is OUT_OF_MEMORY rather than a process the kernel's OOM killer takes. */
#if !defined(SF_MAX_ALLOC) && defined(SF_MULTI_ISA)
extern size_t sf_alloc_limit;
#define SF_MAX_ALLOC sf_alloc_limit
#endif
#ifndef SF_MAX_ALLOC
#define SF_MAX_ALLOC ((size_t)0x7fffffff)
#endif

/* A zeroed block for the large arenas (the weights, the activations).
 * Natively (core/isa.c) its 2 MB-aligned part is marked for transparent huge
 * pages, which Debian's kernels give only where asked (THP "madvise"): the
 * weights of a 90 MB model then fault in about 45 pages rather than 22,000,
 * and on a virtual machine those faults were a third of loading it. */
#if defined(SF_MULTI_ISA)
void *sf_calloc_big(size_t bytes);
#else
#define sf_calloc_big(bytes) calloc(1, (bytes))
#endif

/* The one helper for a size made of several factors that come from user input
 * (batch, lengths, heads, vocab, ...): *out = the product, or 0 returned on
 * overflow of size_t (32 bits in wasm32). Every factor is converted to size_t
 * first, so a negative int becomes huge and overflows rather than wrapping
 * into a small size.   if (!SF_SIZE(&n, B, T, C)) -> OUT_OF_MEMORY */
static inline int sf_size_n(size_t *out, const size_t *f, size_t n) {
    size_t p = 1;
    for (size_t i = 0; i < n; i++)
        if (!sf_mul_size(p, f[i], &p)) return 0;
    *out = p;
    return 1;
}
#define SF_SIZE(out, ...) sf_size_n((out), (const size_t[]){__VA_ARGS__}, sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t))

#endif
