/* The Node-API addon: the C ABI of core/api.c for Node, the same calls the wasm
 * module exports, so that bindings/runtime/ drives either through one
 * interface (runtime/native.js). A thin layer and nothing more:
 *
 *   - every export of api.c as a function of the same name; pointers and
 *     sizes travel as numbers (addresses are below 2^53), as in wasm;
 *   - memory: read(ptr, bytes) copies out into a new ArrayBuffer, write(ptr,
 *     view) copies in: JavaScript never holds a view of native memory, so a
 *     stale pointer can never be read through a view after a free;
 *     load_chunk(loader, view) hands a model's chunk to sf_load_chunk from the
 *     view's own bytes (loading makes no copy of the weights in between);
 *   - sf_forward_async: sf_forward on a libuv thread (napi_async_work) with its
 *     error carried back to the JS thread, a Promise of the return code;
 *   - init(isa): the kernels' variant (core/isa.c), once per process;
 *   - the encoders an env made and did not dispose are freed when it ends.
 *
 * Built by build.sh with clang against npm's node-api-headers, NAPI_VERSION 8,
 * no node-gyp; the napi_* symbols resolve against the node executable at load. */
#define NAPI_VERSION 8
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../encoder.h"
#include "../error.h"
#include "../isa.h"
#include "../pool.h"

/* api.c's exports (declared here: api.c has no header, the wasm module is its interface) */
int sf_abi_version(void);
int sf_plugin_api_version(void);
const char *sf_error_message(void);
int sf_error_code(void);
void sf_error_restore(int code, const char *msg);
void *sf_alloc(size_t n);
void sf_dealloc(void *p);
const char *sf_result_ptr(void);
size_t sf_result_len(void);
void sf_result_free(void);
int sf_plugin_count(int kind);
const char *sf_plugin_name(int kind, int i);
void *sf_create(const char *json, size_t len, int dtype);
int sf_set_weight(void *e, const char *name, size_t name_len, const float *data, size_t count);
int sf_init(void *e, double seed, double output_scale);
void *sf_load(const unsigned char *bytes, size_t len);
void sf_destroy(void *e);
int sf_config_json(const void *e);
int sf_save(const void *e);
int sf_max_len(const void *e);
int sf_param_count(const void *e);
const char *sf_param_name(const void *e, int i);
int sf_param_ndim(const void *e, int i);
int sf_param_plugin(const void *e, int i);
int sf_param_dim(const void *e, int i, int d);
int sf_param_read(const void *e, int i, float *dst);
int sf_reserve(void *e, int B, int T, int N, int flags, int rows);
void *sf_head_rows(void *e);
void *sf_head_output(void *e);
void *sf_ids(void *e);
void *sf_lens(void *e);
void *sf_type_ids(void *e);
void *sf_skip_layers(void *e);
void sf_set_threads(void *e, int n);
int sf_dtype(const void *e);
const char *sf_q8_kernel(void);
int sf_threads_arrived(void);
int sf_threads_tasks(int id);
void *sf_output(void *e);
void *sf_attentions(void *e);
void *sf_hidden_states(void *e);
void *sf_logits(void *e);
int sf_forward(void *e, int B, int flags);
int sf_position_vectors(void *e, int T);
int sf_position_scores(void *e, const float *q, const float *k, int T);
int sf_nonfinite(const float *x, int n);
void sf_column_ranges(float *lo, float *hi, const float *x, int M, int D);
void sf_row_norms(float *inv, const float *a, int M, int D);
void sf_similarity(float *out, const float *a, const float *inv_a, int M, const float *b, const float *inv_b, int N, int D, int fn);
void sf_search(int32_t *idx, float *out, const float *q, const float *inv_q, int M, const float *c, const float *inv_c, int N, int D, int k, int fn);
void sf_hamming(int32_t *idx, float *out, const uint8_t *q, int M, const uint8_t *c, int N, int bytes, int k);
void sf_quantize(void *out, const float *x, int M, int D, int precision, const float *starts, const float *steps);
void sf_sparse_rows(int32_t *idx, float *val, int32_t *counts, const float *x, int M, int V, int k);
void sf_sparse_search(int32_t *ids, float *out, const int32_t *qoff, const int32_t *qidx, const float *qval, int M, const int32_t *coff,
                      const int32_t *cidx, const float *cval, int N, float *dense, int k);
size_t sf_maxsim_scratch(int nq, int D);
void sf_maxsim(int32_t *ids, float *out, const float *q, int nq, const float *docs, const int32_t *doff, int N, int D, int k, float *scratch);
void *sf_attention_lens(void *e);
void *sf_load_begin(const unsigned char *head, size_t head_len, size_t file_len, int dtype);
int sf_load_tensors(const void *l);
const size_t *sf_load_plan(const void *l);
int sf_load_chunk(void *l, const void *src, size_t len);
void *sf_load_end(void *l);
void sf_load_free(void *l);

/* ---------------------------------------------------------------- arguments and results */

#define MAX_ARGS 12

/* argv[0 .. n) or a TypeError: a wrong call is a bug of the bindings, never a crash */
static int args(napi_env env, napi_callback_info info, size_t n, napi_value *argv) {
    size_t argc = MAX_ARGS;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < n) {
        napi_throw_type_error(env, "BAD_ARGUMENT", "swapformer addon: too few arguments");
        return 0;
    }
    return 1;
}
static napi_value ret_int(napi_env env, int64_t x) {
    napi_value v;
    napi_create_int64(env, x, &v);
    return v;
}
static napi_value ret_ptr(napi_env env, const void *p) {
    napi_value v;
    napi_create_double(env, (double)(uintptr_t)p, &v);
    return v;
}
static napi_value ret_void(napi_env env) {
    napi_value v;
    napi_get_undefined(env, &v);
    return v;
}
static napi_value bad_type(napi_env env) {
    napi_throw_type_error(env, "BAD_ARGUMENT", "swapformer addon: an argument is not a number");
    return NULL;
}

/* The arguments of a call, read before it: the integer and the double value of each
 * (a pointer, a size and an int are integers; sf_init's seed and scale doubles). */
typedef struct {
    int64_t i[MAX_ARGS];
    double d[MAX_ARGS];
} call_args;
static int read_args(napi_env env, napi_callback_info info, size_t n, napi_value *argv, call_args *a) {
    if (!args(env, info, n, argv)) return 0;
    for (size_t k = 0; k < n; k++)
        if (napi_get_value_int64(env, argv[k], &a->i[k]) != napi_ok || napi_get_value_double(env, argv[k], &a->d[k]) != napi_ok) {
            bad_type(env);
            return 0;
        }
    return 1;
}

/* w_<name>: the export <name>(args...) of api.c; A(i) a pointer, I(i) an int, Z(i) a size, D(i) a double */
#define A(k) ((void *)(uintptr_t)a_.i[k])
#define I(k) ((int)a_.i[k])
#define Z(k) ((size_t)a_.i[k])
#define D(k) (a_.d[k])
#define WRAP(name, n, RET, call)                                                                                                                     \
    static napi_value w_##name(napi_env env, napi_callback_info info) {                                                                              \
        napi_value argv[MAX_ARGS];                                                                                                                   \
        call_args a_;                                                                                                                                \
        if (!read_args(env, info, n, argv, &a_)) return NULL;                                                                                        \
        (void)a_;                                                                                                                                    \
        RET(call);                                                                                                                                   \
    }
#define R_INT(call)  return ret_int(env, (int64_t)(call))
#define R_PTR(call)  return ret_ptr(env, (const void *)(call))
#define R_VOID(call) return (call), ret_void(env)

/* ---------------------------------------------------------------- encoders of an env
 * Each env (the main thread, each worker_threads Worker) keeps the encoders it made;
 * when it ends, those it did not dispose are freed (in wasm they went with the
 * Worker's memory), but for one whose pass still runs on a libuv thread. */

typedef struct {
    void **h;
    size_t n, cap;
    void *busy; /* the encoder whose forward_async runs now (one at a time per env: the bindings queue them) */
} env_state;

static env_state *state_of(napi_env env) {
    env_state *st = NULL;
    napi_get_instance_data(env, (void **)&st);
    return st;
}
static void track(napi_env env, void *e) {
    env_state *st = state_of(env);
    if (!st || !e) return;
    if (st->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 16;
        void **h = realloc(st->h, cap * sizeof *h);
        if (!h) return; /* untracked: freed by dispose or the finalizer only */
        st->h = h, st->cap = cap;
    }
    st->h[st->n++] = e;
}
static void untrack(napi_env env, void *e) {
    env_state *st = state_of(env);
    for (size_t i = 0; st && i < st->n; i++)
        if (st->h[i] == e) {
            st->h[i] = st->h[--st->n];
            return;
        }
}
static void env_end(napi_env env, void *data, void *hint) {
    (void)env, (void)hint;
    env_state *st = data;
    for (size_t i = 0; i < st->n; i++)
        if (st->h[i] != st->busy) sf_destroy(st->h[i]);
    free(st->h);
    free(st);
}

/* the calls that make or free an encoder, tracked */
#define WRAP_MAKES(name, n, call)                                                                                                                    \
    static napi_value w_##name(napi_env env, napi_callback_info info) {                                                                              \
        napi_value argv[MAX_ARGS];                                                                                                                   \
        call_args a_;                                                                                                                                \
        if (!read_args(env, info, n, argv, &a_)) return NULL;                                                                                        \
        void *e = call;                                                                                                                              \
        track(env, e);                                                                                                                               \
        return ret_ptr(env, e);                                                                                                                      \
    }
WRAP_MAKES(sf_create, 3, sf_create(A(0), Z(1), I(2)))
WRAP_MAKES(sf_load, 2, sf_load(A(0), Z(1)))
WRAP_MAKES(sf_load_end, 1, sf_load_end(A(0)))
static napi_value w_sf_destroy(napi_env env, napi_callback_info info) {
    napi_value argv[MAX_ARGS];
    call_args a_;
    if (!read_args(env, info, 1, argv, &a_)) return NULL;
    untrack(env, A(0));
    sf_destroy(A(0));
    return ret_void(env);
}

WRAP(sf_abi_version, 0, R_INT, sf_abi_version())
WRAP(sf_plugin_api_version, 0, R_INT, sf_plugin_api_version())
WRAP(sf_error_message, 0, R_PTR, sf_error_message())
WRAP(sf_error_code, 0, R_INT, sf_error_code())
WRAP(sf_alloc, 1, R_PTR, sf_alloc(Z(0)))
WRAP(sf_dealloc, 1, R_VOID, sf_dealloc(A(0)))
WRAP(sf_result_ptr, 0, R_PTR, sf_result_ptr())
WRAP(sf_result_len, 0, R_INT, sf_result_len())
WRAP(sf_result_free, 0, R_VOID, sf_result_free())
WRAP(sf_plugin_count, 1, R_INT, sf_plugin_count(I(0)))
WRAP(sf_plugin_name, 2, R_PTR, sf_plugin_name(I(0), I(1)))
WRAP(sf_set_weight, 5, R_INT, sf_set_weight(A(0), A(1), Z(2), A(3), Z(4)))
WRAP(sf_init, 3, R_INT, sf_init(A(0), D(1), D(2)))
WRAP(sf_config_json, 1, R_INT, sf_config_json(A(0)))
WRAP(sf_save, 1, R_INT, sf_save(A(0)))
WRAP(sf_max_len, 1, R_INT, sf_max_len(A(0)))
WRAP(sf_param_count, 1, R_INT, sf_param_count(A(0)))
WRAP(sf_param_name, 2, R_PTR, sf_param_name(A(0), I(1)))
WRAP(sf_param_ndim, 2, R_INT, sf_param_ndim(A(0), I(1)))
WRAP(sf_param_plugin, 2, R_INT, sf_param_plugin(A(0), I(1)))
WRAP(sf_param_dim, 3, R_INT, sf_param_dim(A(0), I(1), I(2)))
WRAP(sf_param_read, 3, R_INT, sf_param_read(A(0), I(1), A(2)))
WRAP(sf_reserve, 6, R_INT, sf_reserve(A(0), I(1), I(2), I(3), I(4), I(5)))
WRAP(sf_head_rows, 1, R_PTR, sf_head_rows(A(0)))
WRAP(sf_head_output, 1, R_PTR, sf_head_output(A(0)))
WRAP(sf_ids, 1, R_PTR, sf_ids(A(0)))
WRAP(sf_lens, 1, R_PTR, sf_lens(A(0)))
WRAP(sf_attention_lens, 1, R_PTR, sf_attention_lens(A(0)))
WRAP(sf_type_ids, 1, R_PTR, sf_type_ids(A(0)))
WRAP(sf_skip_layers, 1, R_PTR, sf_skip_layers(A(0)))
WRAP(sf_set_threads, 2, R_VOID, sf_set_threads(A(0), I(1)))
WRAP(sf_dtype, 1, R_INT, sf_dtype(A(0)))
WRAP(sf_q8_kernel, 0, R_PTR, sf_q8_kernel())
WRAP(sf_threads_arrived, 0, R_INT, sf_threads_arrived())
WRAP(sf_threads_tasks, 1, R_INT, sf_threads_tasks(I(0)))
WRAP(sf_threads_grow, 1, R_INT, sf_pool_grow(I(0)))
WRAP(sf_output, 1, R_PTR, sf_output(A(0)))
WRAP(sf_attentions, 1, R_PTR, sf_attentions(A(0)))
WRAP(sf_hidden_states, 1, R_PTR, sf_hidden_states(A(0)))
WRAP(sf_logits, 1, R_PTR, sf_logits(A(0)))
WRAP(sf_forward, 3, R_INT, sf_forward(A(0), I(1), I(2)))
WRAP(sf_position_vectors, 2, R_INT, sf_position_vectors(A(0), I(1)))
WRAP(sf_position_scores, 4, R_INT, sf_position_scores(A(0), A(1), A(2), I(3)))
WRAP(sf_nonfinite, 2, R_INT, sf_nonfinite(A(0), I(1)))
WRAP(sf_column_ranges, 5, R_VOID, sf_column_ranges(A(0), A(1), A(2), I(3), I(4)))
WRAP(sf_row_norms, 4, R_VOID, sf_row_norms(A(0), A(1), I(2), I(3)))
WRAP(sf_similarity, 9, R_VOID, sf_similarity(A(0), A(1), A(2), I(3), A(4), A(5), I(6), I(7), I(8)))
WRAP(sf_search, 11, R_VOID, sf_search(A(0), A(1), A(2), A(3), I(4), A(5), A(6), I(7), I(8), I(9), I(10)))
WRAP(sf_hamming, 8, R_VOID, sf_hamming(A(0), A(1), A(2), I(3), A(4), I(5), I(6), I(7)))
WRAP(sf_quantize, 7, R_VOID, sf_quantize(A(0), A(1), I(2), I(3), I(4), A(5), A(6)))
WRAP(sf_sparse_rows, 7, R_VOID, sf_sparse_rows(A(0), A(1), A(2), A(3), I(4), I(5), I(6)))
WRAP(sf_sparse_search, 12, R_VOID, sf_sparse_search(A(0), A(1), A(2), A(3), A(4), I(5), A(6), A(7), A(8), I(9), A(10), I(11)))
WRAP(sf_maxsim_scratch, 2, R_INT, sf_maxsim_scratch(I(0), I(1)))
WRAP(sf_maxsim, 10, R_VOID, sf_maxsim(A(0), A(1), A(2), I(3), A(4), A(5), I(6), I(7), I(8), A(9)))
WRAP(sf_load_begin, 4, R_PTR, sf_load_begin(A(0), Z(1), Z(2), I(3)))
WRAP(sf_load_tensors, 1, R_INT, sf_load_tensors(A(0)))
WRAP(sf_load_plan, 1, R_PTR, sf_load_plan(A(0)))
WRAP(sf_load_chunk, 3, R_INT, sf_load_chunk(A(0), A(1), Z(2)))
WRAP(sf_load_free, 1, R_VOID, sf_load_free(A(0)))

/* sf_set_alloc_limit(bytes): the largest single allocation of the core (core/error.h) */
static napi_value m_set_alloc_limit(napi_env env, napi_callback_info info) {
    napi_value argv[MAX_ARGS];
    call_args a_;
    if (!read_args(env, info, 1, argv, &a_)) return NULL;
    if (a_.i[0] > 0) sf_alloc_limit = (size_t)a_.i[0];
    return ret_void(env);
}

/* ---------------------------------------------------------------- memory */

/* read(ptr, bytes): a new ArrayBuffer holding a copy of [ptr, ptr + bytes) */
static napi_value m_read(napi_env env, napi_callback_info info) {
    napi_value argv[MAX_ARGS], ab;
    call_args a_;
    if (!read_args(env, info, 2, argv, &a_)) return NULL;
    const void *p = A(0);
    size_t n = Z(1);
    void *data;
    if (napi_create_arraybuffer(env, n, &data, &ab) != napi_ok) return NULL;
    if (n) memcpy(data, p, n);
    return ab;
}

/* The bytes of a typed array or DataView v: 1, or 0 with the TypeError `refusal` thrown. */
static int view_bytes(napi_env env, napi_value v, const char *refusal, void **data, size_t *bytes) {
    bool is_ta = false, is_dv = false;
    size_t len = 0, elem = 1, off;
    napi_typedarray_type t;
    napi_value ab;
    napi_is_typedarray(env, v, &is_ta);
    if (is_ta) {
        if (napi_get_typedarray_info(env, v, &t, &len, data, &ab, &off) != napi_ok) return 0;
        switch (t) {
        case napi_int8_array:
        case napi_uint8_array:
        case napi_uint8_clamped_array: elem = 1; break;
        case napi_int16_array:
        case napi_uint16_array: elem = 2; break;
        case napi_int32_array:
        case napi_uint32_array:
        case napi_float32_array: elem = 4; break;
        default: elem = 8;
        }
    } else {
        napi_is_dataview(env, v, &is_dv);
        if (!is_dv || napi_get_dataview_info(env, v, &len, data, &ab, &off) != napi_ok) {
            napi_throw_type_error(env, "BAD_ARGUMENT", refusal);
            return 0;
        }
    }
    *bytes = len * elem;
    return 1;
}

/* write(ptr, view): copies the bytes of a typed array (or DataView) to ptr */
static napi_value m_write(napi_env env, napi_callback_info info) {
    napi_value argv[MAX_ARGS];
    call_args a_;
    void *data = NULL;
    size_t n = 0;
    if (!read_args(env, info, 1, argv, &a_) || !args(env, info, 2, argv) ||
        !view_bytes(env, argv[1], "swapformer addon: write takes a typed array", &data, &n))
        return NULL;
    if (n) memcpy(A(0), data, n);
    return ret_void(env);
}

/* load_chunk(loader, view): sf_load_chunk over a Uint8Array's own bytes, with no
 * copy into the core's memory first (the wasm build has to make one) */
static napi_value m_load_chunk(napi_env env, napi_callback_info info) {
    napi_value argv[MAX_ARGS], out;
    call_args a_;
    void *data = NULL;
    size_t n = 0;
    if (!read_args(env, info, 1, argv, &a_) || !args(env, info, 2, argv) ||
        !view_bytes(env, argv[1], "swapformer addon: load_chunk takes a typed array", &data, &n))
        return NULL;
    if (napi_create_int32(env, sf_load_chunk(A(0), data, n), &out) != napi_ok) return NULL;
    return out;
}

/* cstr(ptr): the NUL-terminated UTF-8 string at ptr ('' for NULL) */
static napi_value m_cstr(napi_env env, napi_callback_info info) {
    napi_value argv[MAX_ARGS], v;
    call_args a_;
    if (!read_args(env, info, 1, argv, &a_)) return NULL;
    const char *p = A(0);
    napi_create_string_utf8(env, p ? p : "", NAPI_AUTO_LENGTH, &v);
    return v;
}

/* ---------------------------------------------------------------- forward off the JS thread */

typedef struct {
    napi_async_work work;
    napi_deferred done;
    env_state *st;
    void *e;
    int B, flags, rc, code;
    char msg[SF_ERROR_MSG_CAP];
} forward_job;

static void forward_execute(napi_env env, void *p) { /* a libuv thread: no napi_* calls here */
    (void)env;
    forward_job *j = p;
    j->rc = sf_forward(j->e, j->B, j->flags);
    if (j->rc) { /* the core's error is this thread's: carried back to the JS thread */
        j->code = sf_error_code();
        strncpy(j->msg, sf_error_message(), sizeof j->msg - 1);
    }
}

static void forward_complete(napi_env env, napi_status status, void *p) { /* the JS thread */
    forward_job *j = p;
    napi_value v;
    if (j->st && j->st->busy == j->e) j->st->busy = NULL;
    if (status == napi_ok) {
        if (j->rc) sf_error_restore(j->code, j->msg);
        napi_create_int32(env, j->rc, &v);
        napi_resolve_deferred(env, j->done, v);
    } else {
        napi_create_string_utf8(env, "swapformer addon: the forward pass was cancelled", NAPI_AUTO_LENGTH, &v);
        napi_reject_deferred(env, j->done, v);
    }
    napi_delete_async_work(env, j->work);
    free(j);
}

/* sf_forward_async(h, B, flags): Promise<rc>. The caller (the bindings' exclusive queue) keeps the
 * encoder and its buffers untouched until it settles. */
static napi_value m_forward_async(napi_env env, napi_callback_info info) {
    napi_value argv[MAX_ARGS], promise, name;
    call_args a_;
    if (!read_args(env, info, 3, argv, &a_)) return NULL;
    void *e = A(0);
    int B = I(1), flags = I(2);
    forward_job *j = calloc(1, sizeof *j);
    if (!j) {
        napi_throw_error(env, "OUT_OF_MEMORY", "swapformer addon: out of memory");
        return NULL;
    }
    j->e = e, j->B = B, j->flags = flags, j->st = state_of(env);
    if (j->st) j->st->busy = e;
    if (napi_create_promise(env, &j->done, &promise) != napi_ok ||
        napi_create_string_utf8(env, "swapformer.forward", NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_create_async_work(env, NULL, name, forward_execute, forward_complete, j, &j->work) != napi_ok ||
        napi_queue_async_work(env, j->work) != napi_ok) {
        free(j);
        napi_throw_error(env, "INTERNAL", "swapformer addon: cannot queue the forward pass");
        return NULL;
    }
    return promise;
}

/* ---------------------------------------------------------------- kernels */

static napi_value m_variants(napi_env env, napi_callback_info info);

/* init(isa or null): selects the kernels' variant (once per process), and
 * returns {isa, lanes, q8Kernel, variants: [{name, supported}]}; throws
 * BAD_ARGUMENT for a variant this binary lacks or this CPU cannot run. */
static napi_value m_init(napi_env env, napi_callback_info info) {
    napi_value argv[MAX_ARGS], out, list, v;
    if (!args(env, info, 1, argv)) return NULL;
    napi_valuetype t;
    napi_typeof(env, argv[0], &t);
    char name[32] = {0};
    if (t == napi_string) {
        size_t n;
        napi_get_value_string_utf8(env, argv[0], name, sizeof name, &n);
    }
    if (sf_isa_select(t == napi_string ? name : NULL)) {
        napi_throw_error(env, "BAD_ARGUMENT", "unknown, unsupported or already chosen");
        return NULL;
    }
    napi_create_object(env, &out);
    napi_create_string_utf8(env, sf_isa_current_name(), NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, out, "isa", v);
    napi_create_int32(env, sf_isa()->lanes, &v);
    napi_set_named_property(env, out, "lanes", v);
    napi_create_int32(env, sf_isa()->q8_amax, &v);
    napi_set_named_property(env, out, "q8Amax", v);
    list = m_variants(env, info);
    napi_set_named_property(env, out, "variants", list);
    return out;
}

/* variants(): [{name, supported}] of this binary, best first, without choosing one */
static napi_value m_variants(napi_env env, napi_callback_info info) {
    (void)info;
    napi_value list;
    napi_create_array_with_length(env, (size_t)sf_isa_count(), &list);
    for (int i = 0; i < sf_isa_count(); i++) {
        napi_value item, s;
        napi_create_object(env, &item);
        napi_create_string_utf8(env, sf_isa_name(i), NAPI_AUTO_LENGTH, &s);
        napi_set_named_property(env, item, "name", s);
        napi_get_boolean(env, sf_isa_supported(i), &s);
        napi_set_named_property(env, item, "supported", s);
        napi_set_element(env, list, (uint32_t)i, item);
    }
    return list;
}

/* ---------------------------------------------------------------- registration */

#define EXPORT(name)                                                                                                                                 \
    { #name, NULL, w_##name, NULL, NULL, NULL, napi_default_jsproperty, NULL }

NAPI_MODULE_INIT() {
    env_state *st = calloc(1, sizeof *st);
    if (!st || napi_set_instance_data(env, st, env_end, NULL) != napi_ok) free(st);
    napi_property_descriptor d[] = {
        EXPORT(sf_abi_version),
        EXPORT(sf_plugin_api_version),
        EXPORT(sf_error_message),
        EXPORT(sf_error_code),
        EXPORT(sf_alloc),
        EXPORT(sf_dealloc),
        EXPORT(sf_result_ptr),
        EXPORT(sf_result_len),
        EXPORT(sf_result_free),
        EXPORT(sf_plugin_count),
        EXPORT(sf_plugin_name),
        EXPORT(sf_create),
        EXPORT(sf_set_weight),
        EXPORT(sf_init),
        EXPORT(sf_load),
        EXPORT(sf_destroy),
        EXPORT(sf_config_json),
        EXPORT(sf_save),
        EXPORT(sf_max_len),
        EXPORT(sf_param_count),
        EXPORT(sf_param_name),
        EXPORT(sf_param_ndim),
        EXPORT(sf_param_plugin),
        EXPORT(sf_param_dim),
        EXPORT(sf_param_read),
        EXPORT(sf_reserve),
        EXPORT(sf_head_rows),
        EXPORT(sf_head_output),
        EXPORT(sf_ids),
        EXPORT(sf_lens),
        EXPORT(sf_attention_lens),
        EXPORT(sf_type_ids),
        EXPORT(sf_skip_layers),
        EXPORT(sf_set_threads),
        EXPORT(sf_dtype),
        EXPORT(sf_q8_kernel),
        EXPORT(sf_threads_arrived),
        EXPORT(sf_threads_tasks),
        EXPORT(sf_threads_grow),
        EXPORT(sf_output),
        EXPORT(sf_attentions),
        EXPORT(sf_hidden_states),
        EXPORT(sf_logits),
        EXPORT(sf_forward),
        EXPORT(sf_position_vectors),
        EXPORT(sf_position_scores),
        EXPORT(sf_nonfinite),
        EXPORT(sf_column_ranges),
        EXPORT(sf_row_norms),
        EXPORT(sf_similarity),
        EXPORT(sf_search),
        EXPORT(sf_hamming),
        EXPORT(sf_sparse_rows),
        EXPORT(sf_sparse_search),
        EXPORT(sf_maxsim_scratch),
        EXPORT(sf_maxsim),
        EXPORT(sf_quantize),
        EXPORT(sf_load_begin),
        EXPORT(sf_load_tensors),
        EXPORT(sf_load_plan),
        EXPORT(sf_load_chunk),
        EXPORT(sf_load_end),
        EXPORT(sf_load_free),
        {"read", NULL, m_read, NULL, NULL, NULL, napi_default_jsproperty, NULL},
        {"write", NULL, m_write, NULL, NULL, NULL, napi_default_jsproperty, NULL},
        {"load_chunk", NULL, m_load_chunk, NULL, NULL, NULL, napi_default_jsproperty, NULL},
        {"cstr", NULL, m_cstr, NULL, NULL, NULL, napi_default_jsproperty, NULL},
        {"sf_forward_async", NULL, m_forward_async, NULL, NULL, NULL, napi_default_jsproperty, NULL},
        {"init", NULL, m_init, NULL, NULL, NULL, napi_default_jsproperty, NULL},
        {"variants", NULL, m_variants, NULL, NULL, NULL, napi_default_jsproperty, NULL},
        {"sf_set_alloc_limit", NULL, m_set_alloc_limit, NULL, NULL, NULL, napi_default_jsproperty, NULL},
    };
    if (napi_define_properties(env, exports, sizeof d / sizeof d[0], d) != napi_ok) return NULL;
    return exports;
}
