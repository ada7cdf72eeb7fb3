/* test_faults.c — the page's live checks (al_session_verify) against a broken core: built only
 * with -DAL_FAULTS (build/faults), it switches on each deliberate bug of base/fault.h in turn,
 * runs a session through its prefill and decode steps, and requires the check meant to catch
 * that bug to fail — and, with no fault on, every check to pass. Then the refusals no valid
 * input reaches: a GGUF export whose weights cannot be read. */
#include "attnlab.h"
#include "base/fault.h"
#include "../check.h"
#include "../tok_image.h"

#include <string.h>

#ifndef AL_FAULTS
#error "test_faults needs a build with -DAL_FAULTS"
#endif

static const struct {
    al_fault_id fault;
    al_check_id check; /* the check that must turn red */
    const char *what;
} CASES[] = {
    {AL_FAULT_GQA_MODULO, AL_CHECK_REPEAT_KV, "GQA mapping h mod n_kv"},
    {AL_FAULT_CACHE_BYTES, AL_CHECK_SHAPES, "cache byte count off by 4"},
    {AL_FAULT_ROPE_SCALE, AL_CHECK_ROPE_NORM, "RoPE that scales"},
    {AL_FAULT_ROPE_ABSOLUTE, AL_CHECK_ROPE_RELATIVE, "RoPE angle m^2 * freq"},
    {AL_FAULT_MASK_LEAK, AL_CHECK_MASK_ZERO, "mask that shows the next token"},
    {AL_FAULT_SOFTMAX_NORM, AL_CHECK_ROWS_SUM, "softmax rows summing to 1.001"},
    {AL_FAULT_CACHE_DRIFT, AL_CHECK_CACHE_DIFF, "decode step one ulp off"},
};

/* Runs the seeds' layer (GQA 4/2) with a prompt of 5 tokens and 3 decode steps under `fault`,
 * and fills checks. Returns 0 if the session could not be run. */
static int run_session(al_fault_id fault, al_check checks[AL_CHECK_COUNT]) {
    al_fault_active = fault; /* before create: RoPE's table is built there */
    al_session_config cfg = {al_attn_hparams_default(), 42, 5, 3};
    al_error err = {0};
    al_session *s = NULL;
    int ok = al_session_create(&cfg, &s, &err) == AL_OK && al_session_prefill(s, &err) == AL_OK;
    for (int i = 0; ok && i < 3; i++) ok = al_session_step(s, &err) == AL_OK;
    ok = ok && al_session_verify(s, checks, &err) == AL_OK;
    CHECK(ok, "fault %d: the session did not run: %s", (int)fault, err.msg);
    al_session_free(s);
    al_fault_active = AL_FAULT_NONE;
    return ok;
}

/* A weight that cannot be read is refused with its tensor's name, in float32 and float16, and
 * no image is returned: never a file whose weights are zeros. */
static void test_gguf_weight_read(void) {
    const char *pieces[] = {" ", "a", " a"};
    const float scores[] = {-1, -2, -3};
    size_t size = 0;
    uint8_t *bin = tok_image(pieces, scores, 3, &size);
    al_tokenizer *t = NULL;
    al_model *m = NULL;
    al_error err = {0};
    const al_model_hparams hp = al_minimind_hparams_for(262, 16, 1, 2, 1);
    CHECK(bin && al_tok_llama2c_create(bin, size, 0, &t, &err) == AL_OK, "tokenizer: %s", err.msg);
    CHECK(al_model_create(&hp, 4, 4, &m, &err) == AL_OK, "model: %s", err.msg);
    free(bin);
    for (int f16 = 0; m && t && f16 < 2; f16++) {
        uint8_t *image = NULL;
        size = 0;
        CHECK(al_model_export_gguf(m, t, f16 ? AL_DTYPE_F16 : AL_DTYPE_F32, "m", &image, &size, &err) == AL_OK,
              "no fault: %s", err.msg);
        al_buffer_free(image);
        al_fault_active = AL_FAULT_WEIGHT_READ;
        image = NULL;
        const al_status st = al_model_export_gguf(m, t, f16 ? AL_DTYPE_F16 : AL_DTYPE_F32, "m", &image, &size, &err);
        al_fault_active = AL_FAULT_NONE;
        CHECK(st != AL_OK && !image && size == 0, "GGUF %s with an unreadable weight: status %d, %zu bytes",
              f16 ? "f16" : "f32", (int)st, size);
        CHECK(strstr(err.msg, "'blk.0.attn_k.weight'") && !strchr(err.msg, '\n'),
              "GGUF %s: the error names no tensor: %s", f16 ? "f16" : "f32", err.msg);
        printf("%-32s %s\n", "GGUF weight that cannot be read", err.msg);
        al_buffer_free(image);
    }
    al_model_free(m), al_tok_free(t);
}

int main(void) {
    test_gguf_weight_read();
    al_check checks[AL_CHECK_COUNT];
    if (run_session(AL_FAULT_NONE, checks))
        for (int c = 0; c < AL_CHECK_COUNT; c++)
            CHECK(checks[c].passed, "no fault: check %d fails (value %g, limit %g)", c, checks[c].value,
                  checks[c].threshold);

    int covered[AL_CHECK_COUNT] = {0};
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        if (!run_session(CASES[i].fault, checks)) continue;
        const al_check *c = &checks[CASES[i].check];
        CHECK(!c->passed, "%s: check %d stays green (value %g, limit %g)", CASES[i].what,
              (int)CASES[i].check, c->value, c->threshold);
        printf("%-32s check %d: %g > %g\n", CASES[i].what, (int)CASES[i].check, c->value,
               c->threshold);
        covered[CASES[i].check] = 1;
    }
    for (int c = 0; c < AL_CHECK_COUNT; c++) CHECK(covered[c], "no fault is caught by check %d", c);
    CHECK_DONE();
}
