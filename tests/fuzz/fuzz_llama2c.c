/* fuzz_llama2c.c — libFuzzer harness for the llama2.c checkpoint reader (legacy and version-1
 * formats) and the whole model built from what it accepts: the input is the checkpoint image;
 * an accepted model runs a few tokens (ids from the input's last bytes) through a forward pass
 * and greedy choice. Any crash, leak, sanitizer report or timeout is a bug; every refusal must
 * come back as a status with a message. Build: bash build.sh fuzz. */
#include "attnlab.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    al_error err;
    al_model_hparams hp;
    err.msg[0] = '\0';
    if (al_llama2c_hparams(data, size, &hp, &err) != AL_OK) {
        if (!err.msg[0]) abort(); /* a refusal says why */
        return 0;
    }
    /* A model of at most 8 positions: the point is the reader, not long runs. */
    al_model *m = NULL;
    const int64_t context = hp.max_seq < 8 ? hp.max_seq : 8;
    if (al_model_from_llama2c(data, size, context, context, &m, &err) != AL_OK) {
        if (!err.msg[0]) abort();
        return 0;
    }
    int32_t ids[8];
    for (int64_t i = 0; i < context; i++) ids[i] = (int32_t)(data[size - 1 - i % 4] % hp.vocab);
    float *logits = malloc((size_t)hp.vocab * sizeof(float));
    if (logits && al_model_forward(m, ids, context, logits, 1, hp.vocab, NULL, 0, &err) == AL_OK) {
        const int64_t next = al_sample_greedy(logits, hp.vocab);
        if (next < 0 || next >= hp.vocab) abort();
    }
    free(logits);
    al_model_free(m);
    return 0;
}
