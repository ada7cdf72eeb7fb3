/* fuzz_pth.c — libFuzzer harness for the .pth reader: the input is the file itself (so the
 * fixtures' .pth files are seeds as they are). Each input is read twice: as it is, and with every
 * central directory entry's CRC-32 set to 0 ("not computed"), so that mutations inside an entry
 * reach the pickle machine and the tensor checks instead of stopping at the checksum. Each is
 * read as float32 views (al_pth_model_read), as the model loader reads it (al_model_load: the
 * index of the file, each tensor in its own dtype), then as an image; what is read goes on
 * through the whole chain: the safetensors image parsed back, config.json written
 * from the shapes (flags picked from the input's size), the model built and run on three tokens.
 * Any crash, leak, sanitizer report or timeout is a bug; every error must come back as a status
 * with a message.
 * Build: bash build.sh fuzz. Run: npm run fuzz -- SECONDS. */
#include "attnlab.h"

#include <stdlib.h>
#include <string.h>

/* A built model runs on a few tokens (everything it holds was checked on the way in). */
static void run_model(al_model *m) {
    const al_model_hparams *hp = al_model_get_hparams(m);
    const int32_t ids[3] = {1, (int32_t)(hp->vocab - 1), 0};
    float *logits = malloc((size_t)hp->vocab * sizeof *logits);
    al_error err;
    if (logits && al_model_forward(m, ids, 3, logits, 1, hp->vocab, NULL, 0, &err) != AL_OK && !err.msg[0]) abort();
    free(logits);
}

static void read_pth(const uint8_t *data, size_t size) {
    al_error err;
    /* The loader's reading (MiniMind's names, the views sharing their storages) first. */
    al_pth_model pm;
    if (al_pth_model_read(data, size, NULL, &pm, &err) != AL_OK && (!err.msg[0] || pm.weights || pm.tensors || pm.config)) abort();
    al_pth_model_free(&pm);
    /* The model loader's own path: the index of the file, each tensor read in its dtype. */
    al_model *lm = NULL;
    if (al_model_load(data, size, AL_MODEL_FILE_PTH, NULL, 0, NULL, 4, 4, &lm, &err) == AL_OK) run_model(lm);
    else if (!err.msg[0] || lm) abort();
    al_model_free(lm);
    uint8_t *image = NULL;
    size_t image_size = 0;
    if (al_pth_to_safetensors(data, size, &image, &image_size, &err) != AL_OK) {
        if (!err.msg[0] || image) abort(); /* an error always says what it is, and leaves nothing */
        return;
    }
    al_safetensors *st = NULL;
    if (al_st_parse_view(image, image_size, &st, &err) != AL_OK) abort(); /* we must read our own output */

    /* The flags a command line could give, picked by the input's size. */
    al_pth_flags flags = al_pth_flags_default();
    if (size % 3 == 1) flags.moe_top_k = 2, flags.norm_topk_prob = 0;
    if (size % 5 == 2) flags.yarn = 1, flags.n_heads = 4;
    if (size % 7 == 3) flags.rope_theta = 10000.0, flags.eps = 1e-5;
    const int64_t len = al_minimind_config_from_tensors(st, &flags, NULL, 0, &err);
    char *config = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (len < 0 && !err.msg[0]) abort();
    if (config && al_minimind_config_from_tensors(st, &flags, config, len + 1, &err) != len) abort();
    al_model *m = NULL;
    if (config && al_model_from_minimind(config, (size_t)len, st, 4, 4, &m, &err) == AL_OK) run_model(m);
    else if (config && !err.msg[0]) abort();
    al_model_free(m);
    free(config);
    al_st_free(st);
    al_buffer_free(image);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    read_pth(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    int any = 0;
    for (size_t i = 0; i + 20 <= size; i++)
        if (copy[i] == 'P' && copy[i + 1] == 'K' && copy[i + 2] == 1 && copy[i + 3] == 2) {
            memset(copy + i + 16, 0, 4);
            any = 1;
        }
    if (any) read_pth(copy, size);
    free(copy);
    return 0;
}
