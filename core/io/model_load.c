/* model_load.c — a model from the bytes people have, whichever of the three kinds they are:
 * a llama2.c checkpoint, a MiniMind / Hugging Face model.safetensors (with its config.json), or
 * MiniMind's .pth (torch.save of a state_dict, its config.json inferred from the shapes). The
 * CLI reads the files from disk through a source, piece by piece, the page from the learner's
 * file picker as bytes (a .pth's through a memory source: one reader); both come here. */
#include "attnlab/io.h"
#include "base/internal.h"
#include "io/pth.h"
#include "io/zip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

al_model_file_kind al_model_file_detect(const uint8_t *bytes, size_t size) {
    if (!bytes || size < 8) return AL_MODEL_FILE_UNKNOWN;
    /* 1. a zip archive (local file header "PK\3\4"): torch.save's container */
    if (!memcmp(bytes, "PK\x03\x04", 4)) return AL_MODEL_FILE_PTH;
    /* 2. safetensors: a little-endian u64 header length, then a JSON object */
    uint64_t header = 0;
    for (int i = 7; i >= 0; i--) header = header << 8 | bytes[i];
    if (size > 8 && bytes[8] == '{' && header >= 2 && header <= size - 8) return AL_MODEL_FILE_SAFETENSORS;
    /* 3. llama2.c: seven int32 (legacy) or the "ak42" magic (version 1) */
    if (size >= 28) return AL_MODEL_FILE_LLAMA2C;
    return AL_MODEL_FILE_UNKNOWN;
}

int32_t al_model_file_stop_token(al_model_file_kind kind) {
    /* run.c stops at BOS (1); MiniMind's generate at eos_token_id (2, <|im_end|>) */
    return kind == AL_MODEL_FILE_LLAMA2C ? 1 : 2;
}

void al_pth_model_free(al_pth_model *p) {
    if (!p) return;
    free(p->config);
    al_st_free(p->tensors);
    free(p->weights);
    memset(p, 0, sizeof *p);
}

/* The config.json the index's shapes (and flags) imply, into out (its bytes, when it must
 * compare two tensors, from src, or from the index's data when src is NULL). */
static al_status config_of(al_pth_model *out, const al_byte_source *src, const al_pth_flags *flags, al_error *err) {
    const int64_t len = al_minimind_config_from_source(out->tensors, src, flags, NULL, 0, err);
    if (len < 0) return err->status;
    if (!(out->config = malloc((size_t)len + 1))) return al_fail(err, AL_ERR_NOMEM, "out of memory for config.json");
    if (al_minimind_config_from_source(out->tensors, src, flags, out->config, len + 1, err) != len) return err->status;
    out->config_len = (size_t)len;
    return AL_OK;
}

al_status al_pth_model_read(const uint8_t *bytes, size_t size, const al_pth_flags *flags, al_pth_model *out,
                            al_error *err) {
    al_error local;
    if (!err) err = &local; /* its status is read below */
    if (!out) return al_fail(err, AL_ERR_ARG, "pth: no output");
    memset(out, 0, sizeof *out);
    /* 1. the state_dict's tensors, MiniMind's names only, each storage widened once, and an
     * index over them (tied weights share their floats) */
    al_pth_views v;
    al_status st = al_pth_read_views(bytes, size, 1, &v, err);
    if (st == AL_OK) {
        st = al_pth_views_index(&v, &out->tensors, err);
        out->weights = v.weights, out->n_weights = v.n_weights;
        v.weights = NULL;
    }
    al_pth_views_free(&v);
    /* 2. the config.json the shapes (and flags) imply */
    if (st == AL_OK) st = config_of(out, NULL, flags, err);
    if (st != AL_OK) al_pth_model_free(out);
    return st;
}

al_status al_pth_model_read_source(const al_byte_source *src, const al_pth_flags *flags, al_pth_model *out,
                                   al_error *err) {
    al_error local;
    if (!err) err = &local; /* its status is read below */
    if (!out) return al_fail(err, AL_ERR_ARG, "pth: no output");
    memset(out, 0, sizeof *out);
    /* 1. the index of the state_dict's tensors, MiniMind's names only, nothing read of them;
     * 2. the config.json the shapes (and flags) imply */
    al_status st = al_pth_read_index(src, 1, &out->tensors, err);
    if (st == AL_OK) st = config_of(out, src, flags, err);
    if (st != AL_OK) al_pth_model_free(out);
    return st;
}

/* The context to reserve: `want` if it is in 1..max_seq, else the model's own. */
static int64_t context_for(int64_t want, int64_t max_seq) { return want < 1 || want > max_seq ? max_seq : want; }
static int64_t step_for(int64_t step, int64_t context) { return step < 1 ? 1 : step > context ? context : step; }

static al_status minimind_model(const char *config, size_t config_len, const al_safetensors *tensors,
                                const al_byte_source *src, int64_t context, int64_t max_step, al_model **out,
                                al_error *err) {
    al_model_hparams hp;
    al_status st = al_minimind_hparams(config, config_len, tensors, &hp, err);
    if (st != AL_OK) return st;
    const int64_t c = context_for(context, hp.max_seq);
    return al_model_from_minimind_source(config, config_len, tensors, src, c, step_for(max_step, c), out, err);
}

/* A failure's file, where the step that failed did not say: the weights file's (the bytes). */
static al_status in_weights(al_error *err, al_status st) {
    return err && err->file == AL_FILE_NONE ? al_fail_in(err, AL_FILE_WEIGHTS, st) : st;
}

/* A .pth from src: 1. its index and the config.json its shapes imply, 2. the model, each tensor
 * read from src at its place in the file, in its own dtype, as a safetensors file's are. */
static al_status load_pth(const al_byte_source *src, const char *config_json, size_t config_len, const al_pth_flags *flags,
                          int64_t context, int64_t max_step, al_model **out, al_error *err) {
    al_pth_model p;
    al_status st = al_pth_model_read_source(src, flags, &p, err);
    if (st != AL_OK) return st;
    /* a config.json given with the .pth says what its shapes cannot (top-k, YaRN, ...) */
    const int given = config_json && config_len;
    st = minimind_model(given ? config_json : p.config, given ? config_len : p.config_len, p.tensors, src, context,
                        max_step, out, err);
    al_pth_model_free(&p);
    /* a config.json from the shapes is the .pth's: its faults are the weights file's */
    return given ? st : al_fail_in(err, AL_FILE_WEIGHTS, st);
}

static al_status load_bytes(const uint8_t *bytes, size_t size, al_model_file_kind kind, const char *config_json,
                            size_t config_len, const al_pth_flags *flags, int64_t context, int64_t max_step,
                            al_model **out, al_error *err) {
    al_status st;
    switch (kind == AL_MODEL_FILE_UNKNOWN ? al_model_file_detect(bytes, size) : kind) {
    case AL_MODEL_FILE_PTH: {
        /* the one .pth reader, on the bytes as a source */
        const al_memory mem = {bytes, size};
        const al_byte_source src = al_memory_source(&mem);
        return load_pth(&src, config_json, config_len, flags, context, max_step, out, err);
    }
    case AL_MODEL_FILE_SAFETENSORS: {
        if (!config_json || !config_len)
            return al_fail_in(err, AL_FILE_CONFIG, al_fail(err, AL_ERR_MISSING, "a model.safetensors needs the config.json "
                                                                                "that goes with it"));
        al_safetensors *tensors = NULL;
        if ((st = al_st_parse_view(bytes, size, &tensors, err)) != AL_OK) return st;
        st = minimind_model(config_json, config_len, tensors, NULL, context, max_step, out, err);
        al_st_free(tensors);
        return st;
    }
    case AL_MODEL_FILE_LLAMA2C: {
        al_model_hparams hp;
        if ((st = al_llama2c_hparams(bytes, size, &hp, err)) != AL_OK) return st;
        const int64_t c = context_for(context, hp.max_seq);
        return al_model_from_llama2c(bytes, size, c, step_for(max_step, c), out, err);
    }
    default:
        return al_fail(err, AL_ERR_FORMAT, "not a model: %zu bytes that are neither a llama2.c checkpoint, "
                       "a safetensors file nor a .pth", size);
    }
}

al_status al_model_load(const uint8_t *bytes, size_t size, al_model_file_kind kind, const char *config_json,
                        size_t config_len, const al_pth_flags *flags, int64_t context, int64_t max_step,
                        al_model **out, al_error *err) {
    if (!out || !bytes) return al_fail(err, AL_ERR_ARG, "model: no bytes or no output");
    *out = NULL;
    return in_weights(err, load_bytes(bytes, size, kind, config_json, config_len, flags, context, max_step, out, err));
}

static al_status load_source(const al_byte_source *src, al_model_file_kind kind, const char *config_json,
                             size_t config_len, const al_pth_flags *flags, int64_t context, int64_t max_step,
                             al_model **out, al_error *err) {
    al_status st = AL_OK;
    if (kind == AL_MODEL_FILE_UNKNOWN) {
        /* the kind from the first bytes: al_model_file_detect reads 9 of them and the size */
        uint8_t first[16] = {0};
        const size_t n = src->size < sizeof first ? (size_t)src->size : sizeof first;
        if (src->read(src->ctx, 0, first, n) != 0) return al_fail(err, AL_ERR_IO, "model: the file could not be read");
        kind = al_model_file_detect(first, src->size < sizeof first ? n : src->size > SIZE_MAX ? SIZE_MAX : (size_t)src->size);
    }
    switch (kind) {
    case AL_MODEL_FILE_SAFETENSORS: {
        if (!config_json || !config_len)
            return al_fail_in(err, AL_FILE_CONFIG, al_fail(err, AL_ERR_MISSING, "a model.safetensors needs the config.json "
                                                                                "that goes with it"));
        /* 1. the length field, 2. the header, indexed alone, 3. tensor by tensor into the model */
        uint8_t field[8] = {0};
        uint64_t header_end = 0;
        const size_t n = src->size < 8 ? (size_t)src->size : 8;
        if (src->read(src->ctx, 0, field, n) != 0) return al_fail(err, AL_ERR_IO, "model: the file could not be read");
        if ((st = al_st_header_size(field, n, src->size, &header_end, err)) != AL_OK) return st;
        uint8_t *header = malloc((size_t)header_end);
        if (!header) return al_fail(err, AL_ERR_NOMEM, "model: out of memory for a %llu-byte header", (unsigned long long)header_end);
        al_safetensors *tensors = NULL;
        if (src->read(src->ctx, 0, header, (size_t)header_end) != 0) st = al_fail(err, AL_ERR_IO, "model: the header could not be read");
        else st = al_st_parse_header(header, (size_t)header_end, src->size, &tensors, err);
        free(header); /* the index keeps its own copy of the names */
        if (st == AL_OK) st = minimind_model(config_json, config_len, tensors, src, context, max_step, out, err);
        al_st_free(tensors);
        return st;
    }
    case AL_MODEL_FILE_LLAMA2C: {
        uint8_t first[256] = {0};
        const size_t n = src->size < sizeof first ? (size_t)src->size : sizeof first;
        al_model_hparams hp;
        if (src->read(src->ctx, 0, first, n) != 0) return al_fail(err, AL_ERR_IO, "model: the file could not be read");
        if ((st = al_llama2c_hparams(first, src->size > SIZE_MAX ? SIZE_MAX : (size_t)src->size, &hp, err)) != AL_OK) return st;
        const int64_t c = context_for(context, hp.max_seq);
        return al_model_from_llama2c_source(src, c, step_for(max_step, c), out, err);
    }
    case AL_MODEL_FILE_PTH: return load_pth(src, config_json, config_len, flags, context, max_step, out, err);
    default:
        return al_fail(err, AL_ERR_FORMAT, "not a model: %llu bytes that are neither a llama2.c checkpoint, "
                       "a safetensors file nor a .pth", (unsigned long long)src->size);
    }
}

al_status al_model_load_source(const al_byte_source *src, al_model_file_kind kind, const char *config_json,
                               size_t config_len, const al_pth_flags *flags, int64_t context, int64_t max_step,
                               al_model **out, al_error *err) {
    if (!out || !src || !src->read) return al_fail(err, AL_ERR_ARG, "model: no source or no output");
    *out = NULL;
    return in_weights(err, load_source(src, kind, config_json, config_len, flags, context, max_step, out, err));
}
