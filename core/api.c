/* The exported C ABI, the only surface bindings/index.js calls.
 *
 * Functions return an error code (core/error.h) or a pointer (NULL on
 * failure); the message of the last failure is sf_error_message(). Encoders
 * are opaque handles. Nothing here does I/O: the wasm module instantiates
 * with an empty import object. */
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "modelfile.h"
#include "pool.h"
#include "qgemm.h"
#include "search.h"

#ifdef __EMSCRIPTEN__
#define SF_EXPORT(name) __attribute__((used, export_name(#name))) name
/* emscripten's sbrk calls this after memory.grow; in a standalone module there
 * is no JS glue to notify, and defining it keeps the import object empty. */
void emscripten_notify_memory_growth(size_t memory_index) { (void)memory_index; }
#else
#define SF_EXPORT(name) name
#endif

#define SF_ABI_VERSION 4

/* The last error and result: per thread natively, where every Node env
 * (worker_threads) and the threads running forwardAsync call the core. */
#if defined(__wasm__)
#define SF_TLS
#else
#define SF_TLS _Thread_local
#endif
static SF_TLS sf_error last_error;
static SF_TLS sf_buf result; /* the last text/bytes a call produced (config JSON, saved file) */

static int done(int rc) {
    if (rc == SF_OK) last_error.code = SF_OK, last_error.msg[0] = 0;
    return rc;
}

int SF_EXPORT(sf_abi_version)(void) { return SF_ABI_VERSION; }
int SF_EXPORT(sf_plugin_api_version)(void) { return SF_PLUGIN_API_VERSION; }
const char *SF_EXPORT(sf_error_message)(void) { return last_error.msg; }
int SF_EXPORT(sf_error_code)(void) { return last_error.code; }
#if !defined(__wasm__)
/* Natively: the error of a call made on another thread (forwardAsync), made this thread's. */
void sf_error_restore(int code, const char *msg) {
    last_error.code = code;
    size_t n = strlen(msg);
    if (n >= sizeof last_error.msg) n = sizeof last_error.msg - 1;
    memcpy(last_error.msg, msg, n);
    last_error.msg[n] = 0;
}
#endif

void *SF_EXPORT(sf_alloc)(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) sf_fail(&last_error, SF_OUT_OF_MEMORY, "out of memory allocating %z bytes", (long long)n);
    return p;
}
void SF_EXPORT(sf_dealloc)(void *p) { free(p); }

/* The result buffer: sf_result_ptr / sf_result_len after sf_config_json or sf_save. */
const char *SF_EXPORT(sf_result_ptr)(void) { return result.p; }
size_t SF_EXPORT(sf_result_len)(void) { return result.n; }
void SF_EXPORT(sf_result_free)(void) { sf_buf_free(&result); }

/* ---------------------------------------------------------------- plugins */

int SF_EXPORT(sf_plugin_count)(int kind) { return kind == 0 ? sf_position_count() : sf_norm_count(); }
const char *SF_EXPORT(sf_plugin_name)(int kind, int i) {
    if (kind == 0) return sf_position_at(i) ? sf_position_at(i)->name : NULL;
    return sf_norm_at(i) ? sf_norm_at(i)->name : NULL;
}

/* ---------------------------------------------------------------- encoders */

/* A new encoder from config JSON; set weights with sf_set_weight, then sf_init. */
sf_encoder *SF_EXPORT(sf_create)(const char *json, size_t len, int dtype) {
    sf_config cfg;
    sf_encoder *e = NULL;
    if (dtype != SF_DTYPE_F32 && dtype != SF_DTYPE_Q8) {
        sf_fail(&last_error, SF_BAD_ARGUMENT, "dtype %d is neither f32 (0) nor q8 (1)", dtype);
        return NULL;
    }
    if (sf_config_parse(&cfg, json, len, &last_error) || sf_encoder_create_dtype(&e, &cfg, dtype, &last_error)) return NULL;
    done(SF_OK);
    return e;
}

int SF_EXPORT(sf_set_weight)(sf_encoder *e, const char *name, size_t name_len, const float *data, size_t count) {
    if (strlen(name) != name_len) return sf_fail(&last_error, SF_BAD_WEIGHTS, "weights['%s...'] has a NUL character in its name", name);
    int i = sf_encoder_find_param(e, name);
    if (i < 0) return sf_fail(&last_error, SF_BAD_WEIGHTS, "weights['%s'] is not a tensor of this config", name);
    if (e->params[i].set) return sf_fail(&last_error, SF_BAD_WEIGHTS, "weights['%s'] is given twice", name);
    return done(sf_encoder_set_param(e, i, data, sf_load_f32, count, &last_error));
}

/* Initialises every weight not set, from seed (an integer below 2^53); the
 * output projections (attn.o, ffn.down) scaled by output_scale. */
int SF_EXPORT(sf_init)(sf_encoder *e, double seed, double output_scale) {
    if (!(seed >= 0 && seed <= 9007199254740991.0) || seed != (double)(unsigned long long)seed)
        return sf_fail(&last_error, SF_BAD_ARGUMENT, "seed must be an integer in [0, 2^53), got %g", seed);
    if (!(output_scale > 0 && output_scale <= 1e6))
        return sf_fail(&last_error, SF_BAD_ARGUMENT, "init.outputScale must be 'depth' or a number in (0, 1e6], got %g", output_scale);
    sf_encoder_init_missing(e, (uint64_t)seed, output_scale);
    return done(SF_OK);
}

sf_encoder *SF_EXPORT(sf_load)(const unsigned char *bytes, size_t len) {
    sf_encoder *e = NULL;
    if (sf_model_load(bytes, len, &e, &last_error)) return NULL;
    done(SF_OK);
    return e;
}

void SF_EXPORT(sf_destroy)(sf_encoder *e) { sf_encoder_free(e); }

int SF_EXPORT(sf_config_json)(const sf_encoder *e) {
    sf_buf_free(&result);
    sf_config_write(&e->cfg, &result);
    if (result.failed) return sf_fail(&last_error, SF_OUT_OF_MEMORY, "out of memory writing the config");
    return done(SF_OK);
}

int SF_EXPORT(sf_save)(const sf_encoder *e) {
    unsigned char *p;
    size_t n;
    int rc = sf_model_save(e, &p, &n, &last_error);
    if (rc) return rc;
    sf_buf_free(&result);
    result.p = (char *)p;
    result.n = result.cap = n;
    return done(SF_OK);
}

/* Longest sequence the position plugin encodes, or -1 when unlimited. */
int SF_EXPORT(sf_max_len)(const sf_encoder *e) {
    const char *who;
    int n = sf_config_max_len(&e->cfg, &who);
    return n == 0x7fffffff ? -1 : n;
}

/* ---------------------------------------------------------------- weights */

int SF_EXPORT(sf_param_count)(const sf_encoder *e) { return e->n_params; }
const char *SF_EXPORT(sf_param_name)(const sf_encoder *e, int i) { return i >= 0 && i < e->n_params ? e->params[i].name : NULL; }
int SF_EXPORT(sf_param_ndim)(const sf_encoder *e, int i) { return i >= 0 && i < e->n_params ? e->params[i].ndim : 0; }
/* 1 for a position plugin's tensor (embed.positions, embed.relative_bias...), of either slot. */
int SF_EXPORT(sf_param_plugin)(const sf_encoder *e, int i) { return i >= 0 && i < e->n_params ? e->params[i].plugin : 0; }
int SF_EXPORT(sf_param_dim)(const sf_encoder *e, int i, int d) {
    if (i < 0 || i >= e->n_params) return 0;
    return d == 0 ? e->params[i].rows : e->params[i].cols;
}
int SF_EXPORT(sf_param_read)(const sf_encoder *e, int i, float *dst) {
    if (i < 0 || i >= e->n_params) return sf_fail(&last_error, SF_NOT_FOUND, "no parameter %d", i);
    sf_encoder_get_param(e, i, dst);
    return done(SF_OK);
}

/* ---------------------------------------------------------------- forward */

/* flags: 1 attentions, 2 hidden states, 4 config.head's logits, 8 | 16 | 32 an mlm head's sparse vectors
 * (encoder.h SF_OUT_SPARSE and its modes); rows: the mlm head's chosen rows (else 0) */
int SF_EXPORT(sf_reserve)(sf_encoder *e, int B, int T, int N, int flags, int rows) {
    return done(sf_encoder_reserve_rows(e, B, T, N, flags, rows, &last_error));
}
/* (R) the mlm head's rows, b * T + t, filled after sf_reserve; (..) its logits after sf_forward. */
int32_t *SF_EXPORT(sf_head_rows)(sf_encoder *e) { return e->head_rows; }
float *SF_EXPORT(sf_head_output)(sf_encoder *e) { return e->head_out; }
int32_t *SF_EXPORT(sf_ids)(sf_encoder *e) { return e->ids; }
int32_t *SF_EXPORT(sf_lens)(sf_encoder *e) { return e->lens; }
/* (B) the keys each sequence attends to, its first n tokens (0: all), zeroed by sf_reserve. */
int32_t *SF_EXPORT(sf_attention_lens)(sf_encoder *e) { return e->att_lens; }
/* (N) token type ids, zeroed by sf_reserve; read when the config has typeVocabSize. */
int32_t *SF_EXPORT(sf_type_ids)(sf_encoder *e) { return e->type_ids; }
/* (L) bytes: 1 skips layer l in the next forwards (the stream passes through); all 0 after sf_create. */
unsigned char *SF_EXPORT(sf_skip_layers)(sf_encoder *e) { return e->skip; }

/* ---------------------------------------------------------------- threads */

/* Threads this encoder's forwards may use (the next sf_reserve makes room for them). */
void SF_EXPORT(sf_set_threads)(sf_encoder *e, int n) { e->threads = n < 1 ? 1 : n; }
/* The weights' storage: 0 f32, 1 q8; and the int8 kernel this build runs. */
int SF_EXPORT(sf_dtype)(const sf_encoder *e) { return e->dtype; }
const char *SF_EXPORT(sf_q8_kernel)(void) { return q8_kernel_name(); }
/* The pool (core/pool.h), driven by bindings/runtime/threads.js; inert in the single-threaded builds. */
void SF_EXPORT(sf_thread_run)(int id) { sf_worker_run(id); }
int SF_EXPORT(sf_threads_arrived)(void) { return sf_pool_arrived(); }
void SF_EXPORT(sf_threads_start)(int n) { sf_pool_start(n); }
void SF_EXPORT(sf_threads_stop)(void) { sf_pool_stop(); }
void SF_EXPORT(sf_threads_can_wait)(int yes) { sf_pool_caller_can_wait(yes); }
int SF_EXPORT(sf_threads_tasks)(int id) { return sf_pool_tasks(id); }
float *SF_EXPORT(sf_output)(sf_encoder *e) { return e->out; }
float *SF_EXPORT(sf_attentions)(sf_encoder *e) { return e->att; }
float *SF_EXPORT(sf_hidden_states)(sf_encoder *e) { return e->hidden; }
float *SF_EXPORT(sf_logits)(sf_encoder *e) { return e->logits; }

int SF_EXPORT(sf_forward)(sf_encoder *e, int B, int flags) { return done(sf_encoder_forward(e, B, flags, &last_error)); }

/* Probes: results in sf_output (T, C) and sf_attentions (H, T, T). */
int SF_EXPORT(sf_position_vectors)(sf_encoder *e, int T) { return done(sf_encoder_position_vectors(e, T, &last_error)); }
int SF_EXPORT(sf_position_scores)(sf_encoder *e, const float *q, const float *k, int T) {
    return done(sf_encoder_position_scores(e, q, k, T, &last_error));
}

/* ---------------------------------------------------------------- embeddings (core/search.c)
 * Buffers in wasm memory from sf_alloc; sizes checked by the bindings (M, N, D, k > 0, k <= N). */

int SF_EXPORT(sf_nonfinite)(const float *x, int n) { return sf_first_nonfinite(x, n); }
void SF_EXPORT(sf_column_ranges)(float *lo, float *hi, const float *x, int M, int D) { sf_column_ranges_forward(lo, hi, x, M, D); }
void SF_EXPORT(sf_row_norms)(float *inv, const float *a, int M, int D) { sf_inverse_norms_forward(inv, a, M, D); }
void SF_EXPORT(sf_similarity)(float *out, const float *a, const float *inv_a, int M, const float *b, const float *inv_b, int N, int D, int fn) {
    sf_similarity_forward(out, a, inv_a, M, b, inv_b, N, D, fn);
}
void SF_EXPORT(sf_search)(int32_t *idx, float *out, const float *q, const float *inv_q, int M, const float *c, const float *inv_c, int N, int D,
                          int k, int fn) {
    sf_search_forward(idx, out, q, inv_q, M, c, inv_c, N, D, k, fn);
}
void SF_EXPORT(sf_hamming)(int32_t *idx, float *out, const uint8_t *q, int M, const uint8_t *c, int N, int bytes, int k) {
    sf_hamming_search(idx, out, q, M, c, N, bytes, k);
}
void SF_EXPORT(sf_quantize)(void *out, const float *x, int M, int D, int precision, const float *starts, const float *steps) {
    sf_quantize_forward(out, x, M, D, precision, starts, steps);
}
void SF_EXPORT(sf_sparse_rows)(int32_t *idx, float *val, int32_t *counts, const float *x, int M, int V, int k) {
    sf_sparse_rows_forward(idx, val, counts, x, M, V, k);
}
void SF_EXPORT(sf_sparse_search)(int32_t *ids, float *out, const int32_t *qoff, const int32_t *qidx, const float *qval, int M, const int32_t *coff,
                                 const int32_t *cidx, const float *cval, int N, float *dense, int k) {
    sf_sparse_search_forward(ids, out, qoff, qidx, qval, M, coff, cidx, cval, N, dense, k);
}
size_t SF_EXPORT(sf_maxsim_scratch)(int nq, int D) { return sf_maxsim_scratch_floats(nq, D); }
void SF_EXPORT(sf_maxsim)(int32_t *ids, float *out, const float *q, int nq, const float *docs, const int32_t *doff, int N, int D, int k,
                          float *scratch) {
    sf_maxsim_forward(ids, out, q, nq, docs, doff, N, D, k, scratch);
}

/* ---------------------------------------------------------------- streaming load
 * (core/modelfile.h): the bindings copy the header, then the data in chunks of
 * whole rows through one small buffer, so wasm memory holds the packed
 * weights and that buffer, never the file. */

/* head: the file's first head_len bytes (the 8-byte length and the header
 * JSON at least); file_len: the whole file's; dtype: the weights' storage
 * (0 f32, 1 q8, -1 the file's). NULL on failure. */
sf_model_loader *SF_EXPORT(sf_load_begin)(const unsigned char *head, size_t head_len, size_t file_len, int dtype) {
    sf_model_loader *l = NULL;
    if (sf_model_begin(head, head_len, file_len, dtype, &l, &last_error)) return NULL;
    done(SF_OK);
    return l;
}
int SF_EXPORT(sf_load_tensors)(const sf_model_loader *l) { return sf_model_tensors(l); }
/* SF_PLAN_FIELDS (4) size_t per tensor in data order: param index, data begin, data end, bytes per row. */
const size_t *SF_EXPORT(sf_load_plan)(const sf_model_loader *l) { return sf_model_plan(l); }
int SF_EXPORT(sf_load_chunk)(sf_model_loader *l, const void *src, size_t len) { return done(sf_model_chunk(l, src, len, &last_error)); }
/* The encoder, or NULL on failure; call sf_load_free(l) after, either way. */
sf_encoder *SF_EXPORT(sf_load_end)(sf_model_loader *l) {
    sf_encoder *e = NULL;
    if (sf_model_end(l, &e, &last_error)) return NULL;
    done(SF_OK);
    return e;
}
void SF_EXPORT(sf_load_free)(sf_model_loader *l) { sf_model_free(l); }
