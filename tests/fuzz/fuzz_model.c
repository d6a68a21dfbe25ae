/* libFuzzer target: the model-file parser (safetensors header, metadata,
 * config, tensor table), the streaming load, and everything a loaded model
 * then does.
 *   ./build.sh fuzz [seconds] */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/modelfile.h"

/* The streaming API fed as a caller might: chunks of 1, 2, ... 11 rows (f32
 * panels cut anywhere; whole panels of 8 rows times that for q8 weights),
 * rather than the largest whole panels sf_model_load feeds. */
static int load_odd_chunks(const uint8_t *data, size_t size, int dtype, sf_encoder **out, sf_error *err) {
    sf_model_loader *l;
    int rc = sf_model_begin(data, size, size, dtype, &l, err);
    if (rc) return rc;
    size_t unit = sf_model_dtype(l) == SF_DTYPE_Q8 ? 8 : 1;
    unsigned long long hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | data[i];
    const uint8_t *d = data + 8 + (size_t)hlen;
    const size_t *plan = sf_model_plan(l);
    size_t step = 0;
    for (int i = 0; i < sf_model_tensors(l) && !rc; i++) {
        const size_t *f = plan + (size_t)i * SF_PLAN_FIELDS;
        for (size_t at = f[1]; at < f[2] && !rc;) {
            size_t rows = (1 + step++ % 11) * unit, n = f[2] - at;
            if (rows <= n / f[3]) n = rows * f[3];
            rc = sf_model_chunk(l, d + at, n, err);
            at += n;
        }
    }
    if (!rc) rc = sf_model_end(l, out, err);
    sf_model_free(l);
    return rc;
}

/* A model that loads must run and round-trip: a short batch of valid ids. */
static void run_and_save(sf_encoder *e) {
    sf_error err;
    int T = e->cfg.max_len < 5 ? e->cfg.max_len : 5;
    if (!sf_encoder_reserve(e, 2, T, T + 1, SF_OUT_ATTENTIONS | SF_OUT_HIDDEN, &err)) {
        e->lens[0] = T;
        e->lens[1] = 1;
        for (int t = 0; t <= T; t++) e->ids[t] = (t * 7) % e->cfg.vocab_size;
        int frc = sf_encoder_forward(e, 2, SF_OUT_ATTENTIONS | SF_OUT_HIDDEN, &err);
        if (frc && frc != SF_NON_FINITE) abort(); /* finite but huge weights may overflow float32: reported, not returned */
    }
    unsigned char *saved;
    size_t len;
    if (!sf_model_save(e, &saved, &len, &err)) {
        sf_encoder *back = NULL;
        if (sf_model_load(saved, len, &back, &err)) abort(); /* what we write, we read, bit for bit (q8 too) */
        if (back->dtype != e->dtype || back->param_floats != e->param_floats ||
            memcmp(back->param_arena, e->param_arena, e->param_floats * sizeof(float)))
            abort();
        sf_encoder_free(back);
        free(saved);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sf_encoder *e = NULL, *odd = NULL;
    sf_error err, err2;
    int rc = sf_model_load(data, size, &e, &err), rc2 = load_odd_chunks(data, size, -1, &odd, &err2);
    /* however the data is cut, the same verdict, the same message, the same packed weights */
    if (rc != rc2 || (rc && (err.code != err2.code || strcmp(err.msg, err2.msg)))) abort();
    if (rc) {
        if (err.code == SF_OK || !err.msg[0]) abort(); /* a failure must say why */
        return 0;
    }
    if (odd->param_floats != e->param_floats || memcmp(odd->param_arena, e->param_arena, e->param_floats * sizeof(float))) abort();
    sf_encoder_free(odd);
    run_and_save(e);
    /* the same file quantized on load (q8) or dequantized (f32): it loads, runs, round-trips */
    sf_encoder *other = NULL;
    if (!load_odd_chunks(data, size, e->dtype == SF_DTYPE_Q8 ? SF_DTYPE_F32 : SF_DTYPE_Q8, &other, &err)) run_and_save(other);
    sf_encoder_free(other);
    sf_encoder_free(e);
    return 0;
}
