/* libFuzzer target: the model-file parser (safetensors header, metadata,
 * config, tensor table) and everything a loaded model then does.
 *   ./build.sh fuzz [seconds] */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/modelfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sf_encoder *e = NULL;
    sf_error err;
    if (sf_model_load(data, size, &e, &err)) {
        if (err.code == SF_OK || !err.msg[0]) abort(); /* a failure must say why */
        return 0;
    }
    /* a model that loads must run and round-trip: a short batch of valid ids */
    int T = e->cfg.max_len < 5 ? e->cfg.max_len : 5;
    if (!sf_encoder_reserve(e, 2, T, T + 1, SF_OUT_ATTENTIONS | SF_OUT_HIDDEN, &err)) {
        e->lens[0] = T;
        e->lens[1] = 1;
        for (int t = 0; t <= T; t++) e->ids[t] = (t * 7) % e->cfg.vocab_size;
        int rc = sf_encoder_forward(e, 2, SF_OUT_ATTENTIONS | SF_OUT_HIDDEN, &err);
        if (rc && rc != SF_NON_FINITE) abort(); /* finite but huge weights may overflow float32: reported, not returned */
    }
    unsigned char *saved;
    size_t len;
    if (!sf_model_save(e, &saved, &len, &err)) {
        sf_encoder *back = NULL;
        if (sf_model_load(saved, len, &back, &err)) abort(); /* what we write, we read */
        sf_encoder_free(back);
        free(saved);
    }
    sf_encoder_free(e);
    return 0;
}
