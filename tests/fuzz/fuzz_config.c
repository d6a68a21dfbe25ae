/* libFuzzer target: the config parser (JSON reader, validation, plugin
 * options), the config writer, and parameter layout for what passes.
 *   ./build.sh fuzz [seconds] */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/encoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sf_config cfg;
    sf_error err;
    if (sf_config_parse(&cfg, (const char *)data, size, &err)) {
        if (err.code == SF_OK || !err.msg[0]) abort();
        return 0;
    }
    /* the resolved config reads back as the same config */
    sf_buf out = {0};
    sf_config_write(&cfg, &out);
    sf_config again;
    if (out.failed || sf_config_parse(&again, out.p, out.n, &err)) abort();
    sf_buf out2 = {0};
    sf_config_write(&again, &out2);
    if (out2.n != out.n || memcmp(out.p, out2.p, out.n)) abort();
    sf_buf_free(&out);
    sf_buf_free(&out2);
    /* small enough models are built, initialised and run once */
    double params = (double)cfg.vocab_size * cfg.d_model + (double)cfg.layers * (4.0 * cfg.d_model + 3.0 * cfg.ff_dim) * cfg.d_model;
    if (params > 4e6 || (double)cfg.max_len * cfg.d_model > 4e6) return 0;
    sf_encoder *e = NULL;
    if (sf_encoder_create(&e, &cfg, &err)) return 0; /* OUT_OF_MEMORY is an answer */
    sf_encoder_init_missing(e, 7, 1.0);
    int T = cfg.max_len < 4 ? cfg.max_len : 4;
    if (!sf_encoder_reserve(e, 1, T, T, 0, &err)) {
        e->lens[0] = T;
        for (int t = 0; t < T; t++) e->ids[t] = t % cfg.vocab_size;
        int rc = sf_encoder_forward(e, 1, 0, &err);
        if (rc && rc != SF_NON_FINITE) abort();
    }
    sf_encoder_free(e);
    return 0;
}
