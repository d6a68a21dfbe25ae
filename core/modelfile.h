/* Model files: safetensors with the config in __metadata__ (see modelfile.c). */
#ifndef SF_MODELFILE_H
#define SF_MODELFILE_H

#include "encoder.h"

/* Parses and validates a model file; on success *out is a ready encoder. */
int sf_model_load(const unsigned char *bytes, size_t len, sf_encoder **out, sf_error *err);
/* Writes e as a model file (F32 tensors) into a malloc'd buffer. */
int sf_model_save(const sf_encoder *e, unsigned char **out, size_t *out_len, sf_error *err);

#endif
