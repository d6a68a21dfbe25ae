/* Model files: safetensors with the config in __metadata__ (see modelfile.c). */
#ifndef SF_MODELFILE_H
#define SF_MODELFILE_H

#include "encoder.h"

/* Loading in a stream, so that the file and the packed weights are never
 * held at once:
 *
 *   sf_model_begin(head, head_len, file_len, dtype, &l, err)
 *       head: the file's first head_len bytes, at least the 8-byte header
 *       length and the header JSON; file_len: the whole file's length. Checks
 *       the header, the config, every tensor entry and how the tensors tile
 *       the data, and creates the encoder (its parameter arena) with weights
 *       of dtype (SF_DTYPE_*; -1: the file's __metadata__.dtype, f32 if absent).
 *   sf_model_plan(l): SF_PLAN_FIELDS size_t per tensor, in data order:
 *       {param index, data begin, data end, bytes per row}; offsets are from
 *       the start of the data (file offset 8 + header length). A row is the
 *       [cols] of a [rows, cols] tensor, one element of a vector.
 *   sf_model_chunk(l, src, len, err), repeatedly: the next len bytes of the
 *       data, whole rows of the current tensor (never past its end). Checked
 *       for non-finite values (the tensor and the index named) and written
 *       into the arena, packed. Any number of rows into f32 weights (a chunk
 *       of whole panels, a multiple of SF_NR rows, is packed fastest); q8
 *       Linear weights take whole panels (or end at the last row).
 *   sf_model_end(l, &e, err): every tensor complete and the required ones
 *       present; *out takes the encoder.
 *   sf_model_free(l): always, once; frees the encoder too unless end took it.
 * After a refused chunk the loader accepts nothing more. */
typedef struct sf_model_loader sf_model_loader;
enum { SF_PLAN_FIELDS = 4 };
/* The chunk sf_model_load feeds (the bindings choose their own). */
#define SF_LOAD_CHUNK ((size_t)4 << 20)

int sf_model_begin(const unsigned char *head, size_t head_len, size_t file_len, int dtype, sf_model_loader **out, sf_error *err);
int sf_model_tensors(const sf_model_loader *l);
int sf_model_dtype(const sf_model_loader *l); /* the encoder's SF_DTYPE_* */
const size_t *sf_model_plan(const sf_model_loader *l);
int sf_model_chunk(sf_model_loader *l, const void *src, size_t len, sf_error *err);
int sf_model_end(sf_model_loader *l, sf_encoder **out, sf_error *err);
void sf_model_free(sf_model_loader *l);

/* Parses and validates a whole model file in memory (begin, chunks of whole
 * panels, end); on success *out is a ready encoder. */
int sf_model_load(const unsigned char *bytes, size_t len, sf_encoder **out, sf_error *err);
/* Writes e as a model file into a malloc'd buffer: F32 tensors; a q8 encoder's
 * int8 weights as "<name>.scale" F32 [rows] + "<name>" I8 [rows, cols]. */
int sf_model_save(const sf_encoder *e, unsigned char **out, size_t *out_len, sf_error *err);

#endif
