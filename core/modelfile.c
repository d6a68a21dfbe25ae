/* The model file: safetensors with the config in the metadata.
 *
 *   [u64 little-endian N][N bytes of JSON header][data]
 *   header = {"__metadata__": {"format": "swapformer", "config": "<config JSON>", "dtype"?: "f32"|"q8"},
 *             "<name>": {"dtype": "F32"|"F16"|"BF16"|"I8", "shape": [...], "data_offsets": [begin, end]}, ...}
 *
 * A quantized weight (dtype "q8" files) is two tensors, the scales first:
 * "<name>.scale" F32 [rows], then "<name>" I8 [rows, cols], row r = q[r] * scale[r].
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
    if (exp == 0x1F)
        bits = sign | 0x7F800000u | (man << 13); /* inf, nan */
    else if (exp)
        bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (!man)
        bits = sign;
    else { /* subnormal: renormalise */
        exp = 113;
        while (!(man & 0x400)) {
            man <<= 1;
            exp--;
        }
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
    int node;          /* header member */
    int param;         /* encoder parameter index */
    size_t begin, end; /* data offsets */
    int elem;          /* bytes per element */
    sf_load_fn load;
    int ndim; /* its shape: ndim, and the first two sizes */
    size_t dim0, dim1;
    int i8;    /* dtype I8: quantized rows, scaled by the tensor before it */
    int scale; /* "<param>.scale": the scales of the I8 tensor after it */
} tensor;

static int by_begin(const void *a, const void *b) {
    const tensor *x = a, *y = b; /* empty tensors first at an offset; ties in header order */
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}
static int by_node(const void *a, const void *b) {
    const tensor *x = a, *y = b;
    return x->node < y->node ? -1 : x->node > y->node;
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
    if (sf_json_string_is(j, dt, "F32"))
        t->elem = 4, t->load = sf_load_f32;
    else if (sf_json_string_is(j, dt, "F16"))
        t->elem = 2, t->load = load_f16;
    else if (sf_json_string_is(j, dt, "BF16"))
        t->elem = 2, t->load = load_bf16;
    else if (sf_json_string_is(j, dt, "I8"))
        t->elem = 1, t->load = NULL, t->i8 = 1;
    else {
        char d[16] = "?";
        if (j->nodes[dt].type == SF_JSTRING) sf_json_string(j, dt, d, sizeof d);
        return sf_fail(err, SF_BAD_FILE, "tensor '%s': dtype '%s' is not supported (F32, F16, BF16, I8)", name, d);
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
    if (t->end < t->begin)
        return sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets [%z, %z] are reversed", name, (long long)t->begin, (long long)t->end);
    size_t count = 1, bytes;
    for (int d = 0; d < *ndim; d++)
        if (!sf_mul_size(count, shape[d], &count)) return sf_fail(err, SF_BAD_FILE, "tensor '%s': shape overflows", name);
    if (!sf_mul_size(count, (size_t)t->elem, &bytes) || bytes != t->end - t->begin)
        return sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets span %z bytes, dtype x shape needs %z", name, (long long)(t->end - t->begin),
                       (long long)bytes);
    return SF_OK;
}

/* ------------------------------------------------------------ streaming load
 *
 * begin parses and checks the header (everything the file says about itself)
 * and creates the encoder; chunks then write the data, in data order, straight
 * into the parameter arena (packed); end checks that every tensor arrived and
 * the required ones exist. The file and the packed weights are never held at
 * once: the caller streams from wherever the bytes are. */

struct sf_model_loader {
    sf_encoder *e;
    tensor *ts; /* in data order */
    int nt;
    int cur;               /* the tensor the next chunk belongs to (nt: all done) */
    size_t got;            /* bytes of ts[cur] received */
    size_t *plan;          /* SF_PLAN_FIELDS per tensor, for the bindings */
    unsigned char *scales; /* the scales of the next I8 tensor, as they arrive (4 bytes a row) */
    int failed;            /* a chunk was refused: nothing more is accepted */
};

/* Skips the tensors that hold no bytes (they are complete as they are). */
static void next_nonempty(sf_model_loader *l) {
    for (; l->cur < l->nt && l->ts[l->cur].end == l->ts[l->cur].begin; l->cur++)
        if (!l->ts[l->cur].scale) l->e->params[l->ts[l->cur].param].set = 1;
}

void sf_model_free(sf_model_loader *l) {
    if (!l) return;
    sf_encoder_free(l->e);
    free(l->ts);
    free(l->plan);
    free(l->scales);
    free(l);
}

/* The parameter a tensor named name fills: name itself, or for "<param>.scale"
 * the param (t->scale set); -1 when the config has neither. */
static int tensor_param(const sf_encoder *e, const char *name, tensor *t) {
    int i = sf_encoder_find_param(e, name);
    size_t n = strlen(name);
    if (i >= 0 || n < 7 || strcmp(name + n - 6, ".scale")) return i;
    char base[64];
    memcpy(base, name, n - 6);
    base[n - 6] = 0;
    if ((i = sf_encoder_find_param(e, base)) >= 0) t->scale = 1;
    return i;
}

int sf_model_begin(const unsigned char *head, size_t head_len, size_t file_len, int dtype, sf_model_loader **out, sf_error *err) {
    sf_json j = {0};
    sf_model_loader *l = NULL;
    int rc = SF_OK;
    char *cfg_text = NULL;
    *out = NULL;
    if (file_len < 8) return sf_fail(err, SF_BAD_FILE, "model file is %z bytes: too short for a safetensors header", (long long)file_len);
    if (head_len < 8 || head_len > file_len)
        return sf_fail(err, SF_BAD_ARGUMENT, "model load: %z bytes of the header given for a file of %z", (long long)head_len, (long long)file_len);
    unsigned long long hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | head[i];
    if (hlen > file_len - 8)
        return sf_fail(err, SF_BAD_FILE, "model file: header length %z exceeds the file (%z bytes)",
                       (long long)(hlen > 0x7fffffffffffffffull ? 0x7fffffffffffffffull : hlen), (long long)file_len);
    if (hlen > head_len - 8)
        return sf_fail(err, SF_BAD_ARGUMENT, "model load: the header needs the first %z bytes of the file, %z given", (long long)(hlen + 8),
                       (long long)head_len);
    if ((rc = sf_json_parse(&j, (const char *)head + 8, (size_t)hlen, "model file header", SF_BAD_FILE, err))) return rc;
    size_t data_len = file_len - 8 - (size_t)hlen;

    if (!(l = calloc(1, sizeof *l))) {
        rc = sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the header");
        goto done;
    }
    if (j.nodes[0].type != SF_JOBJECT) {
        rc = sf_fail(err, SF_BAD_FILE, "model file header must be a JSON object");
        goto done;
    }
    int dup = sf_json_duplicate(&j, 0), twice = dup, meta; /* twice: a member whose key repeats another's */
    if (dup == -2) {
        rc = sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the header");
        goto done;
    }
    if (dup >= 0 && sf_json_key_is(&j, dup, "__metadata__")) {
        rc = sf_fail(err, SF_BAD_FILE, "model file: __metadata__ appears twice");
        goto done;
    }
    /* a repeated tensor name is reported below as BAD_WEIGHTS, naming it */
    meta = sf_json_member(&j, 0, "__metadata__");
    if (meta < 0 || j.nodes[meta].type != SF_JOBJECT) {
        rc = sf_fail(err, SF_BAD_FILE, "model file: no __metadata__ object (not a swapformer model)");
        goto done;
    }
    for (int m = j.nodes[meta].first; m >= 0; m = j.nodes[m].next)
        if (j.nodes[m].type != SF_JSTRING) {
            rc = sf_fail(err, SF_BAD_FILE, "model file: __metadata__ values must be strings");
            goto done;
        }
    if ((dup = sf_json_duplicate(&j, meta)) != -1) {
        char key[64];
        if (dup >= 0) sf_json_key(&j, dup, key, sizeof key);
        rc = dup == -2 ? sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the header")
                       : sf_fail(err, SF_BAD_FILE, "model file: __metadata__.%s appears twice", key);
        goto done;
    }
    int fmt = sf_json_member(&j, meta, "format");
    if (fmt < 0 || !sf_json_string_is(&j, fmt, "swapformer")) {
        rc = sf_fail(err, SF_BAD_FILE, "model file: __metadata__.format is not \"swapformer\"");
        goto done;
    }
    int cn = sf_json_member(&j, meta, "config");
    if (cn < 0) {
        rc = sf_fail(err, SF_BAD_FILE, "model file: no __metadata__.config");
        goto done;
    }
    size_t cl = sf_json_string_len(&j, cn);
    if (!(cfg_text = malloc(cl + 1))) {
        rc = sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the config");
        goto done;
    }
    sf_json_string(&j, cn, cfg_text, cl + 1);
    int dn = sf_json_member(&j, meta, "dtype"), file_dtype = SF_DTYPE_F32;
    if (dn >= 0 && sf_json_string_is(&j, dn, "q8"))
        file_dtype = SF_DTYPE_Q8;
    else if (dn >= 0 && !sf_json_string_is(&j, dn, "f32")) {
        rc = sf_fail(err, SF_BAD_FILE, "model file: __metadata__.dtype must be \"f32\" or \"q8\"");
        goto done;
    }
    if (dtype < 0) dtype = file_dtype;
    sf_config cfg;
    if ((rc = sf_config_parse(&cfg, cfg_text, cl, err))) goto done;
    free(cfg_text); /* before the arena: no hole left under it */
    cfg_text = NULL;

    /* the tensor table, checked as far as it can be before the encoder (and
     * its arena) exists: a truncated or malformed file allocates nothing big */
    int nt = j.nodes[0].count - 1;
    size_t plan_bytes;
    if (!SF_SIZE(&plan_bytes, nt > 0 ? (size_t)nt : 1, SF_PLAN_FIELDS, sizeof(size_t)) || !(l->ts = calloc(nt > 0 ? (size_t)nt : 1, sizeof *l->ts)) ||
        !(l->plan = malloc(plan_bytes))) {
        rc = sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the header");
        goto done;
    }
    l->nt = nt;
    int k = 0;
    for (int m = j.nodes[0].first; m >= 0; m = j.nodes[m].next) {
        if (m == meta) continue;
        char name[64];
        size_t shape[8];
        sf_json_key(&j, m, name, sizeof name);
        tensor *t = &l->ts[k++];
        t->node = m;
        if ((rc = read_tensor_entry(&j, m, name, t, shape, &t->ndim, err))) goto done;
        t->dim0 = t->ndim > 0 ? shape[0] : 0;
        t->dim1 = t->ndim > 1 ? shape[1] : 0;
        if (t->end > data_len) {
            rc = sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets end %z is past the data (%z bytes)", name, (long long)t->end,
                         (long long)data_len);
            goto done;
        }
        if (m == twice) {
            rc = sf_fail(err, SF_BAD_WEIGHTS, "model file has tensor '%s' twice", name);
            goto done;
        }
    }
    /* the tensors must tile the data exactly */
    qsort(l->ts, (size_t)nt, sizeof *l->ts, by_begin);
    size_t at = 0;
    for (int i = 0; i < nt; i++) {
        if (l->ts[i].begin != at) {
            char name[64];
            sf_json_key(&j, l->ts[i].node, name, sizeof name);
            rc = sf_fail(err, SF_BAD_FILE, "tensor '%s': data_offsets begin at %z, expected %z (tensors overlap or leave a hole)", name,
                         (long long)l->ts[i].begin, (long long)at);
            goto done;
        }
        at = l->ts[i].end;
    }
    if (at != data_len) {
        rc = sf_fail(err, SF_BAD_FILE, "model file: %z bytes of data after the last tensor", (long long)(data_len - at));
        goto done;
    }

    /* every tensor one the config expects, once, with its shape (in header order) */
    if ((rc = sf_encoder_create_dtype(&l->e, &cfg, dtype, err))) goto done;
    sf_encoder *e = l->e;
    qsort(l->ts, (size_t)nt, sizeof *l->ts, by_node);
    for (int i = 0; i < nt; i++) {
        tensor *t = &l->ts[i];
        int m = t->node;
        char name[64];
        sf_json_key(&j, m, name, sizeof name);
        t->param = -1;
        if (j.nodes[m].kend - j.nodes[m].kstart < sizeof name - 1 && !j.nodes[m].kescaped) t->param = tensor_param(e, name, t);
        if (t->param < 0) {
            rc = sf_fail(err, SF_BAD_WEIGHTS, "model file has a tensor '%s' that this config does not use", name);
            goto done;
        }
        sf_param *p = &e->params[t->param];
        if (t->scale) { /* checked against its I8 tensor below */
            if (t->i8 || t->load != sf_load_f32 || t->ndim != 1 || t->dim0 != (size_t)p->rows || p->ndim != 2) {
                rc = sf_fail(err, SF_BAD_WEIGHTS, "tensor '%s' must be F32 [%d], the scales of the I8 rows of a 2-D weight", name, p->rows);
                goto done;
            }
            continue;
        }
        if (p->set) {
            rc = sf_fail(err, SF_BAD_WEIGHTS, "model file has tensor '%s' twice", name);
            goto done;
        }
        if (t->i8 && p->ndim != 2) {
            rc = sf_fail(err, SF_BAD_WEIGHTS, "tensor '%s' is I8: only 2-D weights may be quantized", name);
            goto done;
        }
        if (t->ndim != p->ndim || t->dim0 != (size_t)p->rows || (t->ndim == 2 && t->dim1 != (size_t)p->cols)) {
            if (p->ndim == 2)
                rc = sf_fail(err, SF_BAD_WEIGHTS, "tensor '%s' has the wrong shape; config needs [%d, %d]", name, p->rows, p->cols);
            else
                rc = sf_fail(err, SF_BAD_WEIGHTS, "tensor '%s' has the wrong shape; config needs [%d]", name, p->rows);
            goto done;
        }
        p->set = 1; /* provisional, to catch duplicates; a tensor's last chunk sets it for real */
    }
    qsort(l->ts, (size_t)nt, sizeof *l->ts, by_begin); /* back to data order */
    size_t most = 0;                                   /* rows of the largest I8 tensor: its scales are held until its rows arrive */
    for (int i = 0; i < nt; i++) {
        tensor *t = &l->ts[i];
        const tensor *next = i + 1 < nt ? &l->ts[i + 1] : NULL, *prev = i ? &l->ts[i - 1] : NULL;
        if ((t->scale && !(next && next->i8 && next->param == t->param)) || (t->i8 && !(prev && prev->scale && prev->param == t->param))) {
            const char *pn = e->params[t->param].name;
            rc = sf_fail(err, SF_BAD_WEIGHTS, "tensor '%s%s': an I8 weight needs its scales '%s.scale' (F32) just before it in the data", pn,
                         t->scale ? ".scale" : "", pn);
            goto done;
        }
        if (t->i8 && t->dim0 > most) most = t->dim0;
    }
    if (most && !(l->scales = malloc(most * 4))) {
        rc = sf_fail(err, SF_OUT_OF_MEMORY, "out of memory reading the header");
        goto done;
    }
    for (int i = 0; i < nt; i++) {
        tensor *t = &l->ts[i];
        sf_param *p = &e->params[t->param];
        p->set = 0;
        size_t *f = l->plan + (size_t)i * SF_PLAN_FIELDS;
        f[0] = (size_t)t->param;
        f[1] = t->begin;
        f[2] = t->end;
        f[3] = t->scale ? 4 : (size_t)p->cols * (size_t)t->elem; /* a row: [cols] of [rows, cols], one element of a vector or of scales */
    }
    next_nonempty(l);
done:
    free(cfg_text);
    sf_json_free(&j);
    if (rc)
        sf_model_free(l);
    else
        *out = l;
    return rc;
}

int sf_model_tensors(const sf_model_loader *l) { return l->nt; }
int sf_model_dtype(const sf_model_loader *l) { return l->e->dtype; }
const size_t *sf_model_plan(const sf_model_loader *l) { return l->plan; }

int sf_model_chunk(sf_model_loader *l, const void *src, size_t len, sf_error *err) {
    if (l->failed) return sf_fail(err, SF_BAD_ARGUMENT, "model load: a chunk was refused already; start again");
    if (!len) return SF_OK;
    if (l->cur >= l->nt) {
        l->failed = 1;
        return sf_fail(err, SF_BAD_ARGUMENT, "model load: %z bytes past the end of the data", (long long)len);
    }
    tensor *t = &l->ts[l->cur];
    sf_param *p = &l->e->params[t->param];
    size_t row = t->scale ? 4 : (size_t)p->cols * (size_t)t->elem, left = t->end - t->begin - l->got;
    if (len > left || len % row) {
        l->failed = 1;
        return sf_fail(err, SF_BAD_ARGUMENT,
                       "model load: a chunk of %z bytes for tensor '%s' (%z bytes left, rows of %z): chunks are whole rows of one tensor",
                       (long long)len, p->name, (long long)left, (long long)row);
    }
    size_t r0 = l->got / row, n = len / row;
    int rc = SF_OK;
    if (t->scale)
        memcpy(l->scales + 4 * r0, src, len); /* checked with their rows */
    else if (t->i8)
        rc = sf_encoder_set_rows_i8(l->e, t->param, r0, n, src, l->scales + 4 * r0, err);
    else
        rc = sf_encoder_set_rows(l->e, t->param, r0, n, src, t->load, err);
    if (rc) {
        l->failed = 1;
        return rc;
    }
    if ((l->got += len) == t->end - t->begin) {
        if (!t->scale) p->set = 1;
        l->cur++;
        l->got = 0;
        next_nonempty(l);
    }
    return SF_OK;
}

int sf_model_end(sf_model_loader *l, sf_encoder **out, sf_error *err) {
    *out = NULL;
    if (l->failed) return sf_fail(err, SF_BAD_ARGUMENT, "model load: a chunk was refused; the encoder is incomplete");
    if (l->cur < l->nt) {
        const tensor *t = &l->ts[l->cur];
        l->failed = 1;
        return sf_fail(err, SF_BAD_ARGUMENT, "model load: the data ended in tensor '%s' (%z of its %z bytes)", l->e->params[t->param].name,
                       (long long)l->got, (long long)(t->end - t->begin));
    }
    int rc = sf_encoder_require_all(l->e, "model file", err);
    if (rc) {
        l->failed = 1;
        return rc;
    }
    *out = l->e;
    l->e = NULL;
    return SF_OK;
}

/* The whole file in memory: begin, then each tensor in chunks of whole rows
 * (up to SF_LOAD_CHUNK bytes, a multiple of SF_NR rows: whole panels), end. */
int sf_model_load(const unsigned char *bytes, size_t len, sf_encoder **out, sf_error *err) {
    sf_model_loader *l;
    *out = NULL;
    int rc = sf_model_begin(bytes, len, len, -1, &l, err);
    if (rc) return rc;
    unsigned long long hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | bytes[i];
    const unsigned char *data = bytes + 8 + (size_t)hlen;
    for (int i = 0; i < l->nt && !rc; i++) {
        const size_t *f = l->plan + (size_t)i * SF_PLAN_FIELDS;
        size_t rows = f[3] ? SF_LOAD_CHUNK / f[3] : 1;
        rows = rows >= (size_t)SF_NR ? rows / SF_NR * SF_NR : rows ? rows : 1;
        for (size_t at = f[1]; at < f[2] && !rc;) {
            size_t n = rows * f[3] < f[2] - at ? rows * f[3] : f[2] - at;
            rc = sf_model_chunk(l, data + at, n, err);
            at += n;
        }
    }
    if (!rc) rc = sf_model_end(l, out, err);
    sf_model_free(l);
    return rc;
}

/* One header entry: "name": {"dtype": .., "shape": [rows(, cols)], "data_offsets": [at, at + bytes]}. */
static void header_entry(sf_buf *h, const char *name, const char *suffix, const char *dtype, int rows, int cols, size_t at, size_t bytes) {
    char full[64];
    size_t n = strlen(name), m = strlen(suffix);
    memcpy(full, name, n);
    memcpy(full + n, suffix, m + 1);
    sf_buf_str(h, ",");
    sf_buf_json_string(h, full, n + m);
    sf_buf_str(h, ":{\"dtype\":\"");
    sf_buf_str(h, dtype);
    sf_buf_str(h, "\",\"shape\":[");
    sf_buf_json_number(h, rows);
    if (cols) {
        sf_buf_str(h, ",");
        sf_buf_json_number(h, cols);
    }
    sf_buf_str(h, "],\"data_offsets\":[");
    sf_buf_json_number(h, (double)at);
    sf_buf_str(h, ",");
    sf_buf_json_number(h, (double)(at + bytes));
    sf_buf_str(h, "]}");
}

int sf_model_save(const sf_encoder *e, unsigned char **out, size_t *out_len, sf_error *err) {
    sf_buf cfg = {0}, h = {0};
    sf_config_write(&e->cfg, &cfg);
    sf_buf_str(&h, "{\"__metadata__\":{\"format\":\"swapformer\",\"config\":");
    sf_buf_json_string(&h, cfg.p ? cfg.p : "", cfg.n);
    if (e->dtype == SF_DTYPE_Q8) sf_buf_str(&h, ",\"dtype\":\"q8\"");
    sf_buf_str(&h, "}");
    size_t at = 0;
    for (int i = 0; i < e->n_params; i++) { /* q8 weights: the scales, then the int8 rows */
        const sf_param *p = &e->params[i];
        size_t elems = (size_t)p->rows * (size_t)p->cols;
        if (p->q8) {
            header_entry(&h, p->name, ".scale", "F32", p->rows, 0, at, (size_t)p->rows * 4);
            at += (size_t)p->rows * 4;
            header_entry(&h, p->name, "", "I8", p->rows, p->cols, at, elems);
            at += elems;
        } else {
            header_entry(&h, p->name, "", "F32", p->rows, p->ndim == 2 ? p->cols : 0, at, elems * 4);
            at += elems * 4;
        }
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
    for (int i = 0; i < e->n_params; i++) { /* wasm and x86 are little-endian; f32 data may be unaligned after I8 tensors */
        const sf_param *p = &e->params[i];
        size_t elems = (size_t)p->rows * (size_t)p->cols, bytes = p->q8 ? (size_t)p->rows * 4 + elems : elems * 4;
        float *tmp = malloc(p->q8 ? (size_t)p->rows * 4 : bytes);
        if (!tmp) {
            free(f);
            sf_buf_free(&cfg);
            sf_buf_free(&h);
            return sf_fail(err, SF_OUT_OF_MEMORY, "out of memory saving the model (%z bytes)", (long long)bytes);
        }
        if (p->q8)
            sf_encoder_get_param_i8(e, i, (int8_t *)(d + (size_t)p->rows * 4), tmp);
        else
            sf_encoder_get_param(e, i, tmp);
        memcpy(d, tmp, p->q8 ? (size_t)p->rows * 4 : bytes);
        free(tmp);
        d += bytes;
    }
    sf_buf_free(&cfg);
    sf_buf_free(&h);
    *out = f;
    *out_len = total;
    return SF_OK;
}
