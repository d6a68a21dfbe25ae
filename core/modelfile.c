/* The model file: safetensors with the config in the metadata.
 *
 *   [u64 little-endian N][N bytes of JSON header][data]
 *   header = {"__metadata__": {"format": "swapformer", "config": "<config JSON>"},
 *             "<name>": {"dtype": "F32"|"F16"|"BF16", "shape": [...], "data_offsets": [begin, end]}, ...}
 *
 * Everything in it is untrusted: offsets must lie inside the data, tile it
 * exactly (no overlap, no hole, nothing after the last tensor), and agree with
 * dtype x shape; every tensor must be one the config expects, with its shape. */
#include "modelfile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static float load_f16(const void *src, size_t i) {
    const unsigned char *b = (const unsigned char *)src + 2 * i;
    unsigned h = (unsigned)b[0] | (unsigned)b[1] << 8;
    unsigned sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
    if (exp == 0x1F) bits = sign | 0x7F800000u | (man << 13); /* inf, nan */
    else if (exp) bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (!man) bits = sign;
    else { /* subnormal: renormalise */
        exp = 113;
        while (!(man & 0x400)) { man <<= 1; exp--; }
        bits = sign | (exp << 23) | ((man & 0x3FF) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float load_bf16(const void *src, size_t i) {
    const unsigned char *b = (const unsigned char *)src + 2 * i;
    unsigned bits = ((unsigned)b[0] | (unsigned)b[1] << 8) << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

typedef struct {
    int node;           /* header member */
    int param;          /* encoder parameter index */
    size_t begin, end;  /* data offsets */
    int elem;           /* bytes per element */
    sf_load_fn load;
} tensor;

static int by_begin(const void *a, const void *b) {
    const tensor *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}


/* The largest integer a header may hold: exact in a double, and a size_t on
 * this target (32 bits in wasm32, where a larger one could not be addressed). */
static double max_index(void) { return (double)SIZE_MAX < 9007199254740991.0 ? (double)SIZE_MAX : 9007199254740991.0; }

static int read_tensor_entry(const sf_json *j, int m, const char *name, tensor *t, size_t shape[8], int *ndim, sf_error *err) {
    const sf_jnode *n = &j->nodes[m];
    if (n->type != SF_JOBJECT) return sf_fail(err, SF_BAD_FILE, "header: tensor '%s' must be an object", name);
    for (int k = n->first; k >= 0; k = j->nodes[k].next)
        if (!sf_json_key_is(j, k, "dtype") && !sf_json_key_is(j, k, "shape") && !sf_json_key_is(j, k, "data_offsets"))
            return sf_fail(err, SF_BAD_FILE, "header: tensor '%s' has an unknown field", name);
    int dt = sf_json_member(j, m, "dtype"), sh = sf_json_member(j, m, "shape"), of = sf_json_member(j, m, "data_offsets");
    if (dt < 0 || sh < 0 || of < 0) return sf_fail(err, SF_BAD_FILE, "header: tensor '%s' needs dtype, shape and data_offsets", name);
    if (sf_json_string_is(j, dt, "F32")) t->elem = 4, t->load = sf_load_f32;
    else if (sf_json_string_is(j, dt, "F16")) t->elem = 2, t->load = load_f16;
    else if (sf_json_string_is(j, dt, "BF16")) t->elem = 2, t->load = load_bf16;
    else {
        char d[16] = "?";
        if (j->nodes[dt].type == SF_JSTRING) sf_json_string(j, dt, d, sizeof d);
        return sf_fail(err, SF_BAD_FILE, "tensor '%s': dtype '%s' is not supported (F32, F16, BF16)", name, d);
    }
    int dup = sf_json_duplicate(j, m);
    if (dup == -2) return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the header");
    if (dup >= 0) return sf_fail(err, SF_BAD_FILE, "header: tensor '%s' has a field twice", name);
    if (j->nodes[sh].type != SF_JARRAY || j->nodes[sh].count > 8)
        return sf_fail(err, SF_BAD_FILE, "tensor '%s': shape must be an array of at most 8 integers", name);
    *ndim = 0;
    for (int k = j->nodes[sh].first; k >= 0; k = j->nodes[k].next) {
        if (!sf_json_is_int(j, k, 0, max_index()))
            return sf_fail(err, SF_BAD_FILE, "tensor '%s': shape must hold integers in [0, %g]", name, max_index());
        shape[(*ndim)++] = (size_t)j->nodes[k].num;
    }
    if (j->nodes[of].type != SF_JARRAY || j->nodes[of].count != 2)
        return sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets must be [begin, end]", name);
    int a = j->nodes[of].first, b = j->nodes[a].next;
    if (!sf_json_is_int(j, a, 0, max_index()) || !sf_json_is_int(j, b, 0, max_index()))
        return sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets must be integers in [0, %g]", name, max_index());
    t->begin = (size_t)j->nodes[a].num;
    t->end = (size_t)j->nodes[b].num;
    if (t->end < t->begin) return sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets [%z, %z] are reversed", name, (long long)t->begin, (long long)t->end);
    size_t count = 1, bytes;
    for (int d = 0; d < *ndim; d++)
        if (!sf_mul_size(count, shape[d], &count)) return sf_fail(err, SF_BAD_FILE, "tensor '%s': shape overflows", name);
    if (!sf_mul_size(count, (size_t)t->elem, &bytes) || bytes != t->end - t->begin)
        return sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets span %z bytes, dtype x shape needs %z", name,
                       (long long)(t->end - t->begin), (long long)bytes);
    return SF_OK;
}

static int load(const unsigned char *bytes, size_t len, sf_encoder **out, sf_error *err) {
    sf_json j = {0};
    sf_encoder *e = NULL;
    tensor *ts = NULL;
    int rc = SF_OK;
    char *cfg_text = NULL;
    if (len < 8) return sf_fail(err, SF_BAD_FILE, "model file is %z bytes: too short for a safetensors header", (long long)len);
    unsigned long long hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | bytes[i];
    if (hlen > len - 8)
        return sf_fail(err, SF_BAD_FILE, "model file: header length %z exceeds the file (%z bytes)", (long long)(hlen > 0x7fffffffffffffffull ? 0x7fffffffffffffffull : hlen), (long long)len);
    if ((rc = sf_json_parse(&j, (const char *)bytes + 8, (size_t)hlen, "model file header", SF_BAD_FILE, err))) return rc;
    const unsigned char *data = bytes + 8 + hlen;
    size_t data_len = len - 8 - (size_t)hlen;

    if (j.nodes[0].type != SF_JOBJECT) { rc = sf_fail(err, SF_BAD_FILE, "model file header must be a JSON object"); goto done; }
    int dup = sf_json_duplicate(&j, 0), meta;
    if (dup == -2) { rc = sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the header"); goto done; }
    if (dup >= 0 && sf_json_key_is(&j, dup, "__metadata__")) { rc = sf_fail(err, SF_BAD_FILE, "model file: __metadata__ appears twice"); goto done; }
    /* a repeated tensor name is reported below as BAD_WEIGHTS, naming it */
    meta = sf_json_member(&j, 0, "__metadata__");
    if (meta < 0 || j.nodes[meta].type != SF_JOBJECT) { rc = sf_fail(err, SF_BAD_FILE, "model file: no __metadata__ object (not a swapformer model)"); goto done; }
    for (int m = j.nodes[meta].first; m >= 0; m = j.nodes[m].next)
        if (j.nodes[m].type != SF_JSTRING) { rc = sf_fail(err, SF_BAD_FILE, "model file: __metadata__ values must be strings"); goto done; }
    if ((dup = sf_json_duplicate(&j, meta)) != -1) {
        char key[64];
        if (dup >= 0) sf_json_key(&j, dup, key, sizeof key);
        rc = dup == -2 ? sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the header")
                       : sf_fail(err, SF_BAD_FILE, "model file: __metadata__.%s appears twice", key);
        goto done;
    }
    int fmt = sf_json_member(&j, meta, "format");
    if (fmt < 0 || !sf_json_string_is(&j, fmt, "swapformer")) { rc = sf_fail(err, SF_BAD_FILE, "model file: __metadata__.format is not \"swapformer\""); goto done; }
    int cn = sf_json_member(&j, meta, "config");
    if (cn < 0) { rc = sf_fail(err, SF_BAD_FILE, "model file: no __metadata__.config"); goto done; }
    size_t cl = sf_json_string_len(&j, cn);
    if (!(cfg_text = malloc(cl + 1))) { rc = sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the config"); goto done; }
    sf_json_string(&j, cn, cfg_text, cl + 1);
    sf_config cfg;
    if ((rc = sf_config_parse(&cfg, cfg_text, cl, err))) goto done;
    if ((rc = sf_encoder_create(&e, &cfg, err))) goto done;

    int nt = j.nodes[0].count - 1;
    if (!(ts = calloc(nt > 0 ? (size_t)nt : 1, sizeof *ts))) { rc = sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the header"); goto done; }
    int k = 0;
    for (int m = j.nodes[0].first; m >= 0; m = j.nodes[m].next) {
        if (m == meta) continue;
        char name[64];
        size_t shape[8];
        int ndim;
        sf_json_key(&j, m, name, sizeof name);
        tensor *t = &ts[k++];
        t->node = m;
        if ((rc = read_tensor_entry(&j, m, name, t, shape, &ndim, err))) goto done;
        if (t->end > data_len) {
            rc = sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets end %z is past the data (%z bytes)", name, (long long)t->end, (long long)data_len);
            goto done;
        }
        t->param = -1;
        if (j.nodes[m].kend - j.nodes[m].kstart < sizeof name - 1 && !j.nodes[m].kescaped) t->param = sf_encoder_find_param(e, name);
        if (t->param < 0) { rc = sf_fail(err, SF_BAD_WEIGHTS, "model file has a tensor '%s' that this config does not use", name); goto done; }
        sf_param *p = &e->params[t->param];
        if (p->set) { rc = sf_fail(err, SF_BAD_WEIGHTS, "model file has tensor '%s' twice", name); goto done; }
        if (ndim != p->ndim || shape[0] != (size_t)p->rows || (ndim == 2 && shape[1] != (size_t)p->cols)) {
            if (p->ndim == 2) rc = sf_fail(err, SF_BAD_WEIGHTS, "tensor '%s' has the wrong shape; config needs [%d, %d]", name, p->rows, p->cols);
            else rc = sf_fail(err, SF_BAD_WEIGHTS, "tensor '%s' has the wrong shape; config needs [%d]", name, p->rows);
            goto done;
        }
        p->set = 1; /* provisional, to catch duplicates; set_param sets it for real */
    }
    /* the tensors must tile the data exactly */
    qsort(ts, (size_t)nt, sizeof *ts, by_begin);
    size_t at = 0;
    for (int i = 0; i < nt; i++) {
        if (ts[i].begin != at) {
            char name[64];
            sf_json_key(&j, ts[i].node, name, sizeof name);
            rc = sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets begin at %z, expected %z (tensors overlap or leave a hole)", name,
                         (long long)ts[i].begin, (long long)at);
            goto done;
        }
        at = ts[i].end;
    }
    if (at != data_len) {
        rc = sf_fail(err, SF_BAD_FILE, "model file: %z bytes of data after the last tensor", (long long)(data_len - at));
        goto done;
    }
    for (int i = 0; i < nt; i++) {
        sf_param *p = &e->params[ts[i].param];
        p->set = 0;
        if ((rc = sf_encoder_set_param(e, ts[i].param, data + ts[i].begin, ts[i].load, (ts[i].end - ts[i].begin) / (size_t)ts[i].elem, err)))
            goto done;
    }
    rc = sf_encoder_require_all(e, "model file", err);
done:
    free(ts);
    free(cfg_text);
    sf_json_free(&j);
    if (rc) sf_encoder_free(e);
    else *out = e;
    return rc;
}

int sf_model_load(const unsigned char *bytes, size_t len, sf_encoder **out, sf_error *err) {
    *out = NULL;
    return load(bytes, len, out, err);
}

int sf_model_save(const sf_encoder *e, unsigned char **out, size_t *out_len, sf_error *err) {
    sf_buf cfg = {0}, h = {0};
    sf_config_write(&e->cfg, &cfg);
    sf_buf_str(&h, "{\"__metadata__\":{\"format\":\"swapformer\",\"config\":");
    sf_buf_json_string(&h, cfg.p ? cfg.p : "", cfg.n);
    sf_buf_str(&h, "}");
    size_t at = 0;
    for (int i = 0; i < e->n_params; i++) {
        const sf_param *p = &e->params[i];
        size_t bytes = (size_t)p->rows * (size_t)p->cols * 4;
        sf_buf_str(&h, ",");
        sf_buf_json_string(&h, p->name, strlen(p->name));
        sf_buf_str(&h, ":{\"dtype\":\"F32\",\"shape\":[");
        sf_buf_json_number(&h, p->rows);
        if (p->ndim == 2) {
            sf_buf_str(&h, ",");
            sf_buf_json_number(&h, p->cols);
        }
        sf_buf_str(&h, "],\"data_offsets\":[");
        sf_buf_json_number(&h, (double)at);
        sf_buf_str(&h, ",");
        sf_buf_json_number(&h, (double)(at + bytes));
        sf_buf_str(&h, "]}");
        at += bytes;
    }
    sf_buf_str(&h, "}");
    while (!h.failed && (h.n + 8) % 8) sf_buf_str(&h, " "); /* data starts 8-byte aligned */
    size_t total = 8 + h.n + at;
    unsigned char *f = h.failed || cfg.failed ? NULL : malloc(total);
    if (!f) {
        sf_buf_free(&cfg);
        sf_buf_free(&h);
        return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory saving the model (%z bytes)", (long long)total);
    }
    for (int i = 0; i < 8; i++) f[i] = (unsigned char)((unsigned long long)h.n >> (8 * i));
    memcpy(f + 8, h.p, h.n);
    unsigned char *d = f + 8 + h.n;
    for (int i = 0; i < e->n_params; i++) {
        const sf_param *p = &e->params[i];
        sf_encoder_get_param(e, i, (float *)(void *)d); /* wasm and x86 are little-endian */
        d += (size_t)p->rows * (size_t)p->cols * 4;
    }
    sf_buf_free(&cfg);
    sf_buf_free(&h);
    *out = f;
    *out_len = total;
    return SF_OK;
}
