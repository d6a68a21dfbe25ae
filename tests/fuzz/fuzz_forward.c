/* libFuzzer target: forward shapes. A tiny model (one of a few configs), then
 * a batch whose shape comes from the input: the number of sequences, their
 * lengths, the output flags. Built with a 32-bit size_t too (./build.sh fuzz
 * runs it -m32), where B x T x C and friends wrap unless every size is checked.
 *
 * Natively (./build.sh fuzz's 64-bit run links the addon's core: every kernel
 * variant, threads) the first byte also picks the variant and 1 to 3 threads.
 *
 * Input: [config][flags][runs of (count, length) as LEB128 varints]...
 *   e.g. 65536 sequences of 1 token then one of 65537 tokens is two runs.
 * Reserve must either fail with OUT_OF_MEMORY / BAD_ARGUMENT, or succeed and
 * then forward must run over every token without a memory error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/encoder.h"
#if defined(SF_MULTI_ISA) && defined(SF_ISA_TESTING) && defined(SF_THREADS)
#include "../../core/isa.h"
#include "../../core/pool.h"
#endif

static const char *const configs[] = {
    "{\"vocabSize\":8,\"dModel\":4,\"heads\":1,\"layers\":1,\"ffDim\":4,\"position\":\"none\",\"norm\":\"rmsnorm\",\"normPlacement\":\"pre\","
    "\"activation\":\"relu\"}",
    "{\"vocabSize\":8,\"dModel\":8,\"heads\":2,\"layers\":1,\"ffDim\":8,\"position\":\"rope\",\"norm\":\"layernorm\",\"normPlacement\":\"post\","
    "\"activation\":\"swiglu\",\"outputHead\":true}",
    "{\"vocabSize\":8,\"dModel\":6,\"heads\":3,\"layers\":2,\"ffDim\":4,\"position\":\"alibi\",\"norm\":\"rmsnorm\",\"normPlacement\":\"pre\","
    "\"activation\":\"gelu\"}",
    "{\"vocabSize\":8,\"dModel\":4,\"heads\":2,\"layers\":1,\"ffDim\":4,\"position\":\"learned\",\"maxLen\":70,\"norm\":\"layernorm\","
    "\"normPlacement\":\"pre\",\"activation\":\"geglu\"}",
    "{\"vocabSize\":8,\"dModel\":4,\"heads\":1,\"layers\":0,\"ffDim\":4,\"position\":\"sinusoidal\",\"norm\":\"layernorm\",\"normPlacement\":\"pre\","
    "\"activation\":\"relu\"}",
    /* config.head (core/heads.c) and config.relativeBias: flag 4 asks for the head's logits */
    "{\"vocabSize\":8,\"dModel\":4,\"heads\":2,\"layers\":1,\"ffDim\":4,\"position\":\"learned\",\"maxLen\":70,\"norm\":\"layernorm\","
    "\"normPlacement\":\"post\",\"activation\":\"gelu\","
    "\"head\":{\"task\":\"sequence\",\"labels\":3,\"dense\":true,\"activation\":\"tanh\"}}",
    "{\"vocabSize\":8,\"dModel\":4,\"heads\":2,\"layers\":1,\"ffDim\":4,\"position\":\"rope\",\"norm\":\"layernorm\",\"normPlacement\":\"pre\","
    "\"activation\":\"geglu\","
    "\"head\":{\"task\":\"sequence\",\"labels\":1,\"pooling\":\"mean\",\"dense\":true,\"activation\":\"gelu\",\"norm\":\"layernorm\"}}",
    "{\"vocabSize\":8,\"dModel\":4,\"heads\":1,\"layers\":1,\"ffDim\":4,\"position\":\"none\",\"relativeBias\":\"t5\",\"relativeBiasOptions\":{"
    "\"buckets\":8,\"maxDistance\":16},"
    "\"norm\":\"rmsnorm\",\"normPlacement\":\"pre\",\"activation\":\"relu\",\"head\":{\"task\":\"token\",\"labels\":5}}",
    "{\"vocabSize\":8,\"dModel\":4,\"heads\":2,\"layers\":1,\"ffDim\":4,\"position\":\"learned\",\"maxLen\":70,\"relativeBias\":\"t5\",\"norm\":"
    "\"layernorm\",\"normPlacement\":\"post\","
    "\"activation\":\"gelu\",\"head\":{\"task\":\"mlm\",\"dense\":true,\"activation\":\"gelu\",\"norm\":\"layernorm\"}}",
};
#define NCONFIGS (sizeof configs / sizeof *configs)
#ifndef MAX_FORWARD_TOKENS /* beyond: reserve only (forward would be slow, not wrong); ./build.sh sets 512 under qemu */
#define MAX_FORWARD_TOKENS 4096
#endif

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

/* A fresh model per input: a reservation never outlives its input. */
static sf_encoder *model(unsigned k) {
    sf_config cfg;
    sf_error err;
    sf_encoder *e = NULL;
    if (sf_config_parse(&cfg, configs[k], strlen(configs[k]), &err) || sf_encoder_create(&e, &cfg, &err)) abort();
    sf_encoder_init_missing(e, 1, 1.0);
    return e;
}

static int run(sf_encoder *e, const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
#if defined(SF_MULTI_ISA) && defined(SF_ISA_TESTING) && defined(SF_THREADS)
    /* the native build (the addon's core): a kernel variant this CPU runs and 1 to 3 threads, from the input's first byte */
    static int grown;
    if (!grown) grown = 1, sf_pool_grow(3);
    int v = (data[0] / NCONFIGS) % sf_isa_count();
    while (!sf_isa_supported(v)) v = (v + 1) % sf_isa_count();
    sf_isa_select(sf_isa_name(v));
#endif
    sf_encoder *e = model(data[0] % NCONFIGS);
#if defined(SF_MULTI_ISA) && defined(SF_ISA_TESTING) && defined(SF_THREADS)
    e->threads = 1 + (data[0] / NCONFIGS / 8) % 3;
#endif
    run(e, data, size);
    sf_encoder_free(e);
    return 0;
}

static int run(sf_encoder *e, const uint8_t *data, size_t size) {
    int flags = data[1] & 7, R = 0; /* an mlm head runs at R chosen rows (data[1] >> 3); one out of range when R > 16 */
    if ((flags & SF_OUT_HEAD) && e->cfg.head.task == SF_HEAD_MLM) R = (data[1] >> 3) + 1;
    const uint8_t *p = data + 2, *end = data + size;
    /* the batch as the bindings would compute it: B, T = longest, N = total, in 64 bits */
    uint64_t B = 0, T = 0, N = 0, count, len;
    int32_t lens[64], nruns = 0; /* the first runs' lengths, replayed below */
    uint64_t counts[64];
    while (nruns < 64 && varint(&p, end, &count) && varint(&p, end, &len)) {
        if (!count || !len || len > 0x7fffffff) continue; /* the bindings refuse empty and oversized sequences */
        if (count > 0x7fffffff) return 0;                 /* a batch beyond int; checked before the sum, which would wrap in 64 bits */
        if ((B += count) > 0x7fffffff || (N += count * len) > 0x7fffffff) return 0; /* likewise batches beyond int */
        if (len > T) T = len;
        lens[nruns] = (int32_t)len;
        counts[nruns++] = count;
    }
    if (!B) return 0;
    sf_error err;
    int rc = sf_encoder_reserve_rows(e, (int)B, (int)T, (int)N, flags, R, &err);
    if (rc == SF_BAD_ARGUMENT && (flags & SF_OUT_HEAD) && !e->cfg.head.task) return 0; /* no head to run: refused */
    if (rc) {
        if (rc != SF_OUT_OF_MEMORY && rc != SF_BAD_ARGUMENT) abort();
        if (!err.msg[0]) abort();
        return 0;
    }
    /* the oracle for wrapped sizes, computed in double: the reservation holds at
     * least the outputs it was asked for */
    const sf_config *c = &e->cfg;
    double need = (double)B * (double)T * c->d_model + (double)N * 2 * c->d_model;
    if (flags & SF_OUT_HIDDEN) need += (double)(c->layers + 1) * (double)B * (double)T * c->d_model;
    if (flags & SF_OUT_ATTENTIONS) need += (double)(c->layers ? c->layers : 1) * (double)B * c->heads * (double)T * (double)T;
    if (c->output_head) need += (double)B * (double)T * c->vocab_size;
    if (flags & SF_OUT_HEAD)
        need += c->head.task == SF_HEAD_SEQUENCE ? (double)B * c->head.labels
                : c->head.task == SF_HEAD_TOKEN  ? (double)B * (double)T * c->head.labels
                                                 : (double)R * c->head.labels;
    if ((double)e->act_floats < need) abort();
    if (N > MAX_FORWARD_TOKENS || need > 1 << 24) return 0; /* big outputs: memset-bound, nothing new */
    int32_t *l = e->lens, *ids = e->ids;
    for (int r = 0; r < nruns; r++)
        for (uint64_t c = 0; c < counts[r]; c++) {
            *l++ = lens[r];
            for (int32_t t = 0; t < lens[r]; t++) *ids++ = (int32_t)((t * 5 + r) % e->cfg.vocab_size);
        }
    for (int r = 0; r < R; r++) { /* the mlm head's rows: tokens of the batch, spread over it, one past it when R > 16 */
        int32_t b = (int32_t)((uint64_t)r * 7919 % B), len = e->lens[b];
        e->head_rows[r] = R > 16 && r == R - 1 ? (int32_t)(B * T) : b * (int32_t)T + (r * 5) % len;
    }
    rc = sf_encoder_forward(e, (int)B, flags, &err);
    if (rc == SF_BAD_ARGUMENT && R > 16) return 0; /* the row out of range: refused */
    if (rc && rc != SF_SEQUENCE_TOO_LONG) abort(); /* learned positions refuse T > maxLen; nothing else may fail */
    if (!rc && R > 16) abort();                    /* a row past the batch must be refused */
    return 0;
}
