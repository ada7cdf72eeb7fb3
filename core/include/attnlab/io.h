/* attnlab/io.h — files in memory: safetensors (parse, query, convert, write), an attention
 * layer built from one, and one layer run on files. Part of attnlab.h. */
#ifndef ATTNLAB_IO_H
#define ATTNLAB_IO_H

#include "attnlab/model.h"
#include "attnlab/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * safetensors: parse from memory, query, convert to float32; and serialise float32 tensors.
 * ------------------------------------------------------------------------------------------ */

#define AL_ST_MAX_DIMS 8

/* A file read piece by piece where it lies, so that it is never held whole beside what is made
 * of it: read(ctx, offset, dst, n) puts the n bytes at offset into dst and returns 0 (non-zero:
 * they could not be read); size is the file's. The command line reads files through one. */
typedef struct {
    int (*read)(void *ctx, uint64_t offset, void *dst, size_t n);
    void *ctx;
    uint64_t size;
} al_byte_source;

typedef enum { AL_DTYPE_F32 = 0, AL_DTYPE_F16, AL_DTYPE_BF16, AL_DTYPE_I64, AL_DTYPE_OTHER } al_dtype;

typedef struct al_safetensors al_safetensors;

typedef struct {
    const char *name;
    al_dtype dtype;
    const char *dtype_name;         /* as written in the file ("F32", "I8", ...) */
    int ndim;
    int64_t shape[AL_ST_MAX_DIMS];
    int64_t numel;
    const void *data;               /* inside the parsed copy; valid until al_st_free (NULL: an
                                     * index of the header only, al_st_parse_header) */
    int64_t nbytes;
    uint64_t offset;                /* where its bytes start in the file */
} al_st_tensor;

/* Validates and indexes a whole file image (copied; the caller may free `bytes` after).
 * Every structural problem is reported as AL_ERR_FORMAT with a message naming it. */
al_status al_st_parse(const uint8_t *bytes, size_t size, al_safetensors **out, al_error *err);

/* The same, but the tensors' data stays in `bytes` (no copy): the caller keeps the image alive
 * and unchanged until al_st_free. */
al_status al_st_parse_view(const uint8_t *bytes, size_t size, al_safetensors **out,
                           al_error *err);

/* For reading a file header first (before its data is read into memory): from the file's
 * first avail >= 8 bytes and its size, checks the header length field and gives the number of
 * bytes the length field and the header take (*header_end). */
al_status al_st_header_size(const uint8_t *bytes, size_t avail, uint64_t file_size,
                            uint64_t *header_end, al_error *err);
/* Then, with the first header_end bytes: every check al_st_parse makes that the header alone
 * decides (JSON, schema, names, shapes, offsets against the data the file size leaves). */
al_status al_st_check_header(const uint8_t *bytes, size_t avail, uint64_t file_size,
                             al_error *err);
/* The index of a file's tensors from its header alone (the file's first avail bytes, which
 * hold the header; the same checks): their data is read from the file piece by piece, at each
 * tensor's offset, and not through this index (data NULL). */
al_status al_st_parse_header(const uint8_t *bytes, size_t avail, uint64_t file_size, al_safetensors **out,
                             al_error *err);
void al_st_free(al_safetensors *st);

int al_st_count(const al_safetensors *st);
al_status al_st_get(const al_safetensors *st, int index, al_st_tensor *info);
/* AL_ERR_MISSING if absent. */
al_status al_st_find(const al_safetensors *st, const char *name, al_st_tensor *info);
/* The index (for al_st_get) of tensor `name`, found in O(log n); -1 if absent. */
int al_st_index(const al_safetensors *st, const char *name);
/* Value of a string entry of "__metadata__", or NULL. */
const char *al_st_metadata(const al_safetensors *st, const char *key);

/* Converts a tensor (F32, F16 or BF16) to float32 into out[cap]; refuses other dtypes,
 * and NaN/inf values (AL_ERR_NONFINITE). */
al_status al_st_read_f32(const al_safetensors *st, const char *name, float *out, int64_t cap,
                         al_error *err);
/* al_st_read_f32's checks of tensor `name` (its dtype, every value finite) on its bytes at
 * data (NULL: the index's own), with the same messages; nothing converted. */
al_status al_st_check_values(const al_safetensors *st, const char *name, const void *data, al_error *err);

typedef struct {
    const char *name;
    const float *data;
    int ndim;
    int64_t shape[AL_ST_MAX_DIMS];
} al_st_entry;

/* Serialises float32 tensors (and optional string metadata as key/value pairs) into buf.
 * *needed receives the exact size; with buf == NULL or cap too small only *needed is set
 * and AL_ERR_CAPACITY returned (AL_OK if buf is NULL and cap is 0: a size query). */
al_status al_st_serialize(const al_st_entry *entries, int n_entries,
                          const char *const *meta_kv, int n_meta,
                          uint8_t *buf, size_t cap, size_t *needed, al_error *err);
/* The same, every tensor stored as `dtype`: AL_DTYPE_F32, or AL_DTYPE_F16 (each float rounded
 * to the nearest half, ties to even, as torch's .half(): 65519 becomes 65504). A value that
 * float16 cannot hold — one that rounds to infinity (|x| >= 65520), infinity or NaN — is
 * refused with AL_ERR_NONFINITE naming the tensor and the element, before anything is
 * written. */
al_status al_st_serialize_as(const al_st_entry *entries, int n_entries, al_dtype dtype,
                             const char *const *meta_kv, int n_meta,
                             uint8_t *buf, size_t cap, size_t *needed, al_error *err);

/* Builds an attention layer from a loaded file. Tensor names are the seeds'
 * ("q_proj.weight", ...) after `prefix` (e.g. "model.layers.3.self_attn."; "" for none).
 * Shapes give hidden, heads, kv heads and head_dim (head_dim from the QK-Norm weights; a file
 * without q_norm.weight is accepted only if base->head_dim > 0, and then QK-Norm is off).
 * rope_base and eps are taken from `base`; scratch is sized for `cap`. */
al_status al_attn_from_safetensors(const al_safetensors *st, const char *prefix,
                                   const al_attn_hparams *base, const al_attn_capacity *cap,
                                   al_attn **out, al_error *err);

/* Only the hyper-parameters such a layer would have (the same checks, nothing allocated): to
 * count what a run will need before it allocates anything. */
al_status al_attn_hparams_from_safetensors(const al_safetensors *st, const char *prefix,
                                           const al_attn_hparams *base, al_attn_hparams *hp,
                                           al_error *err);

/* ------------------------------------------------------------------------------------------
 * One attention layer run on files: weights and input safetensors in, a safetensors result
 * out (the CLI's `forward` and the page share it). The result holds output
 * [batch, seq, hidden] (one pass, no cache), attn_weights [batch, n_heads, seq, seq], k_cache
 * and v_cache [batch, seq, n_kv_heads, head_dim], and output_cached (prefill of P tokens, then
 * one-token decode steps), with the resolved hyper-parameters as metadata.
 * ------------------------------------------------------------------------------------------ */

typedef struct {
    int64_t layer;    /* MiniMind checkpoint layer (names "model.layers.N.self_attn.*"); -1: none */
    double rope_base; /* NAN: the weights' __metadata__ "rope_base", else 10000 */
    double eps;       /* NAN: the weights' __metadata__ "eps", else 1e-6 */
    int64_t prefill;  /* tokens of the prefill; 0: the whole sequence */
    int32_t attn_weights; /* 1: the result holds attn_weights [batch, n_heads, seq, seq]; 0: not */
} al_attn_files_options;

typedef struct {
    al_attn_hparams hp;  /* the layer as resolved from the weights and the options */
    int32_t failed_file; /* on error: AL_FILE_WEIGHTS or AL_FILE_INPUT if a file is to blame */
    int64_t batch, seq, prefill;
    double max_diff;     /* max |output − output_cached| */
    int64_t bytes;       /* size of the result */
} al_attn_files_summary;

al_attn_files_options al_attn_files_options_default(void);

/* *out receives a malloc'd result of summary->bytes bytes, to release with al_buffer_free.
 * opt, summary and err may be NULL. */
al_status al_attn_files_run(const uint8_t *weights, size_t weights_size, const uint8_t *input,
                            size_t input_size, const al_attn_files_options *opt, uint8_t **out,
                            al_attn_files_summary *summary, al_error *err);
void al_buffer_free(void *p);

/* ------------------------------------------------------------------------------------------
 * llama2.c checkpoints (run.c's "legacy" format: a 28-byte header of seven int32, then float32
 * weights; models/stories260K/SOURCE.md gives the layout).
 * ------------------------------------------------------------------------------------------ */

/* The hyper-parameters of a checkpoint image, checked: header fields, the size they imply
 * against the image's (interleaved RoPE, base 10000, eps 1e-5, no QK-Norm). */
al_status al_llama2c_hparams(const uint8_t *bytes, size_t size, al_model_hparams *hp,
                             al_error *err);

/* A model from a checkpoint image, with `context` positions reserved (0: the model's own
 * seq_len) and forward calls of up to max_step tokens. */
al_status al_model_from_llama2c(const uint8_t *bytes, size_t size, int64_t context,
                                int64_t max_step, al_model **out, al_error *err);
/* The same read from src piece by piece, one array of one layer at a time. */
al_status al_model_from_llama2c_source(const al_byte_source *src, int64_t context, int64_t max_step,
                                       al_model **out, al_error *err);

/* ------------------------------------------------------------------------------------------
 * MiniMind / Hugging Face checkpoints: config.json and the state_dict's tensors (safetensors,
 * float32, float16 or bfloat16) by MiniMind's names.
 * ------------------------------------------------------------------------------------------ */

/* The hyper-parameters config.json gives (MiniMindConfig's defaults for absent keys:
 * intermediate_size ceil(hidden·π/64)·64 (also for null; 0 is an attention-only model),
 * rope_theta 1e6, eps 1e-6, tied; MoE with use_moe; YaRN with inference_rope_scaling or a
 * rope_scaling object), QK-Norm when the tensors have it. */
al_status al_minimind_hparams(const char *config_json, size_t config_len, const al_safetensors *st,
                              al_model_hparams *hp, al_error *err);

/* MiniMindConfig's default intermediate_size for a width: ceil(hidden · π / 64) · 64. */
int64_t al_minimind_ffn_hidden(int64_t hidden);
/* MiniMindConfig's defaults for a shape: head_dim hidden / heads, that intermediate_size,
 * max_position_embeddings 32768, rope_theta 1e6, eps 1e-6, QK-Norm, half-split RoPE, tied
 * head, no MoE, no YaRN. */
al_model_hparams al_minimind_hparams_for(int64_t vocab, int64_t hidden, int64_t layers, int64_t heads, int64_t kv_heads);

/* The name of a weight in MiniMind's state_dict ("model.layers.3.self_attn.q_proj.weight",
 * "model.layers.0.mlp.experts.2.up_proj.weight", "lm_head.weight", ...) into out[cap]; its
 * length, or -1 for an invalid p or no room. */
int al_minimind_param_name(char *out, size_t cap, al_model_param p, int64_t layer, int64_t expert);

/* The model, every tensor checked against the config before anything is allocated: present,
 * of the implied shape, and nothing the model has no place for. context 0: the config's
 * max_position_embeddings. An inference model (al_model_create_inference), its weights in the
 * file's dtype when every matrix has the same 16-bit one, float32 otherwise. */
al_status al_model_from_minimind(const char *config_json, size_t config_len, const al_safetensors *st,
                                 int64_t context, int64_t max_step, al_model **out, al_error *err);
/* The same from an index of the header alone (al_st_parse_header), each tensor's bytes read
 * from src at its offset one tensor at a time (src NULL: from st's data). */
al_status al_model_from_minimind_source(const char *config_json, size_t config_len, const al_safetensors *st,
                                        const al_byte_source *src, int64_t context, int64_t max_step,
                                        al_model **out, al_error *err);

/* ------------------------------------------------------------------------------------------
 * MiniMind's own training output, a .pth file: torch.save of a state_dict (its trainer saves
 * {k: v.half()}), read without Python. The zip archive must hold stored entries (as torch.save
 * writes them); its pickle is read by a machine that knows only what a dict of tensors needs
 * (collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch.{Float,Half,BFloat16}Storage)
 * and refuses any other opcode or global by name: nothing is ever executed.
 * ------------------------------------------------------------------------------------------ */

/* The state_dict's tensors as a float32 safetensors image (names and shapes kept, float16 and
 * bfloat16 widened exactly; metadata "format": "pt" and "torch_dtype": "float16", "bfloat16",
 * "float32" or "mixed", as stored). Tensors must be contiguous and inside their storage; one
 * storage may back several tensors (tied weights): it is widened once, but each tensor gets its
 * own copy in the image (safetensors shares no bytes; al_pth_model_read shares them). The
 * pickle may make at most 2^19 values, 2^20 tuple elements, 2^17 dict items and 2^17 tensors
 * (AL_ERR_LIMIT beyond). *out receives a
 * malloc'd image of *out_size bytes, to release with al_buffer_free. AL_ERR_FORMAT with a
 * message naming what is wrong ("zip: ...", "pickle: refusing global os.system ...", "pth: ...");
 * AL_ERR_LIMIT above AL_MAX_MODEL_BYTES of float32 data. */
al_status al_pth_to_safetensors(const uint8_t *bytes, size_t size, uint8_t **out,
                                size_t *out_size, al_error *err);

/* What a state_dict's shapes cannot say, with MiniMind's defaults (al_pth_flags_default). */
typedef struct {
    int64_t n_heads;        /* 0: head_dim from q_norm's length, heads = q_proj rows / head_dim;
                             * a checkpoint without QK-Norm needs it */
    int64_t moe_top_k;      /* num_experts_per_tok: 1 (MoE checkpoints only if not 1) */
    int32_t norm_topk_prob; /* 1, or 0 (MoE checkpoints only) */
    int32_t yarn;           /* 0, or 1: inference_rope_scaling with MiniMind's YaRN (factor 16,
                             * original 2048, beta_fast 32, beta_slow 1, attention factor 1) */
    double rope_theta;      /* 1e6 */
    double eps;             /* rms_norm_eps: 1e-6 */
} al_pth_flags;

al_pth_flags al_pth_flags_default(void);

/* Writes the config.json (MiniMindConfig's keys) that a MiniMind state_dict's tensors imply,
 * for al_minimind_hparams / al_model_from_minimind: hidden_size and vocab_size from the
 * embedding, num_hidden_layers from the layer indices, head_dim, heads and kv heads from
 * q_norm, q_proj and k_proj, intermediate_size from gate_proj (0, attention-only, when it has
 * no rows), MoE (num_experts, moe_intermediate_size) from mlp.gate and the experts,
 * tie_word_embeddings from lm_head's absence or its equality with the embedding; the rest from
 * flags (NULL: the defaults) and max_position_embeddings 32768. Writes at most cap bytes,
 * NUL-terminated, to buf and returns the text's full length (a size query with buf NULL and
 * cap 0), or -1 with *err set. */
int64_t al_minimind_config_from_tensors(const al_safetensors *st, const al_pth_flags *flags,
                                        char *buf, int64_t cap, al_error *err);

/* ------------------------------------------------------------------------------------------
 * Any of the three, from bytes: the kind told by the bytes themselves (a zip archive is a .pth,
 * an 8-byte length and a JSON object a safetensors file, anything else of 28 bytes or more a
 * llama2.c checkpoint, whose own checks then speak).
 * ------------------------------------------------------------------------------------------ */

/* A llama2.c .bin goes with a tokenizer.bin; a model.safetensors with its config.json and a
 * tokenizer.json; a .pth with a tokenizer.json. */
typedef enum {
    AL_MODEL_FILE_UNKNOWN = 0,
    AL_MODEL_FILE_LLAMA2C,
    AL_MODEL_FILE_SAFETENSORS,
    AL_MODEL_FILE_PTH
} al_model_file_kind;

al_model_file_kind al_model_file_detect(const uint8_t *bytes, size_t size);
/* The token generation stops at: run.c's BOS (1) for llama2.c models, MiniMind's eos (2). */
int32_t al_model_file_stop_token(al_model_file_kind kind);

/* A .pth read: its tensors, and the config.json the shapes and flags (NULL: the defaults)
 * imply. A key that is not one of MiniMind's weight names is refused before anything is
 * converted. al_pth_model_read gives the tensors as float32: each storage element a tensor
 * views is widened once, so tensors that share a storage (tied weights) share their floats,
 * and the reading holds no more than the viewed elements as float32 besides the file.
 * al_pth_model_read_source reads only the archive's directory and its pickle from src, and
 * gives an index of the file (al_st_parse_header's kind: data NULL, each tensor's offset in
 * the file and its storage's dtype, F32, F16 or BF16; weights NULL), for
 * al_model_from_minimind_source to read from src. Free with al_pth_model_free (also after a
 * failure, when every field is NULL). */
typedef struct {
    float *weights;          /* [n_weights]: the viewed storage elements, which the tensors point
                              * into (NULL from al_pth_model_read_source) */
    int64_t n_weights;
    al_safetensors *tensors; /* an index over weights (al_st_get's data inside it), or of the file */
    char *config; /* NUL-terminated */
    size_t config_len;
} al_pth_model;
al_status al_pth_model_read(const uint8_t *bytes, size_t size, const al_pth_flags *flags, al_pth_model *out,
                            al_error *err);
al_status al_pth_model_read_source(const al_byte_source *src, const al_pth_flags *flags, al_pth_model *out,
                                   al_error *err);
void al_pth_model_free(al_pth_model *p);

/* The model in `bytes`, read as `kind` (AL_MODEL_FILE_UNKNOWN: as al_model_file_detect says;
 * config_json for a safetensors file, and for a .pth in place of the config its shapes and
 * flags imply when given; ignored by a llama2.c checkpoint), with
 * `context` positions reserved (0 or beyond the model's: its own max_seq) and forward calls of
 * up to max_step tokens. The bytes are not kept. On failure err->file says which file is at
 * fault: AL_FILE_CONFIG (config_json, absent or refused) or AL_FILE_WEIGHTS (the bytes; a
 * .pth's config.json from its shapes is the .pth's). */
al_status al_model_load(const uint8_t *bytes, size_t size, al_model_file_kind kind, const char *config_json,
                        size_t config_len, const al_pth_flags *flags, int64_t context, int64_t max_step,
                        al_model **out, al_error *err);
/* The same, the file read from src: a safetensors file its header first, then tensor by
 * tensor, a llama2.c checkpoint array by array, a .pth its zip directory and its pickle
 * first, then tensor by tensor where the pickle says each lies, so that the file is never held
 * whole beside the model (al_model_load reads a .pth's bytes the same way, as a source). The
 * weights are held in the file's dtype as al_model_from_minimind says. */
al_status al_model_load_source(const al_byte_source *src, al_model_file_kind kind, const char *config_json,
                               size_t config_len, const al_pth_flags *flags, int64_t context, int64_t max_step,
                               al_model **out, al_error *err);

/* A model's weights as a model.safetensors image by MiniMind's names (lm_head left out when
 * tied), with string metadata meta_kv [2·n_meta], stored as dtype (AL_DTYPE_F32, or AL_DTYPE_F16 rounded to
 * nearest): a MiniMind model.safetensors (`attnlab convert`). */
al_status al_model_export(const al_model *m, al_dtype dtype, const char *const *meta_kv, int n_meta, uint8_t **out,
                          size_t *size, al_error *err);

/* ------------------------------------------------------------------------------------------
 * GGUF (llama.cpp's file format, version 3): a model and its tokenizer in one file, for
 * llama.cpp, ollama and LM Studio (io/gguf_write.c gives the layout).
 * ------------------------------------------------------------------------------------------ */

/* The model as llama.cpp runs it: a MiniMind (half-split RoPE, QK-Norm before it) as `qwen3`,
 * or `qwen3moe` for MoE; a llama2.c model (interleaved RoPE) as `llama`; a missing `output`
 * tensor means tied. Tensors by llama.cpp's names (token_embd, blk.N.attn_q, ...), matrices
 * stored as dtype (AL_DTYPE_F32, or AL_DTYPE_F16 rounded to nearest: a value float16 cannot
 * hold is AL_ERR_NONFINITE naming the tensor), norms float32; an attention-only model's FFN as
 * zeros of width 32 (it adds exactly +0). The tokenizer (of the model's vocabulary size, else
 * AL_ERR_CONFIG) as tokenizer.ggml.* (al_tok_gguf_token); name (may be NULL) as general.name.
 * What llama.cpp cannot compute as the model does is AL_ERR_CONFIG, one line saying why: a MoE
 * with norm_topk_prob false (qwen3moe always renormalises), a half-split model without
 * QK-Norm, YaRN with betas other than 32 and 1 or a ramp MiniMind clamps. *out receives a
 * malloc'd image of *size bytes, to release with al_buffer_free. */
al_status al_model_export_gguf(const al_model *m, const al_tokenizer *tok, al_dtype dtype, const char *name,
                               uint8_t **out, size_t *size, al_error *err);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_IO_H */
