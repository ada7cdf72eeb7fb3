/* cmd_train.c — `attnlab train`: a MiniMind trained from a text corpus, in C, on --threads N
 * threads (the machine's cores by default; the same checkpoints, byte for byte, on any number).
 *
 *   1. the corpus split into documents (a line holding only "%", as fortune files separate
 *      them, or an empty line), each encoded as <|im_start|> text <|im_end|> (MiniMind's
 *      pretraining samples) into one stream of ids; the last 5% of the documents held out, or
 *      with fewer than 20 documents the last 5% of the tokens (at least one window)
 *   2. each optimizer step al_train_step's (train/loop.c, the Train tab's too): `accum`
 *      micro-batches of `batch` windows of `seq` tokens drawn from the stream by a generator
 *      seeded with (seed, step, micro-batch) — so a run resumed at any step draws what it would
 *      have drawn — forward, backward (loss / accum), then MiniMind's cosine schedule,
 *      clipping and AdamW
 *   3. a progress line on stderr, a row of loss.csv per step (and the held-out loss at each
 *      checkpoint), and checkpoints: OUT is a MiniMind folder (config.json, model.safetensors,
 *      tokenizer.json) that generate, logits and the page load, plus train_state.safetensors
 *      (AdamW's moments and the run's settings) that --resume goes on from. The two files of
 *      a checkpoint are written beside the old ones (NAME.next) and renamed together, with
 *      SIGINT, SIGTERM and SIGHUP held from the first byte to the last rename: a signal ends
 *      the run after the step under way and its checkpoint, and no temporary file is left on
 *      any exit. A checkpoint whose numbers are not all finite is never written.
 *
 * OUT is refused if it holds a run's files (config.json, model.safetensors,
 * train_state.safetensors, tokenizer.json, loss.csv), unless --resume goes on with that run or
 * --force replaces it; an input (the corpus, the tokenizer) that is one of the files the run
 * writes is refused whatever the flags. What a killed run left (NAME.next, NAME.tmp.XXXXXX) is
 * removed before writing. */
#define _POSIX_C_SOURCE 200809L
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_CORPUS_BYTES ((size_t)256 << 20)
#define DEFAULT_TOKENIZER "models/minimind-tokenizer/tokenizer.json"

typedef struct {
    int64_t hidden, layers, heads, kv_heads, ffn, experts, top_k, vocab;
    int64_t steps, batch, seq, accum, seed, every;
    double lr, clip, weight_decay, aux_coef, rope_theta;
} train_settings;

static volatile sig_atomic_t interrupted;
static void on_interrupt(int sig) {
    (void)sig;
    interrupted = 1;
}

static const int STOPPING[] = {SIGINT, SIGTERM, SIGHUP};

/* Ctrl-C, SIGTERM and SIGHUP end the run after the step under way (and its checkpoint). */
static void catch_interrupt(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof STOPPING / sizeof STOPPING[0]; i++) sigaction(STOPPING[i], &sa, NULL);
}

/* Around every write: the stopping signals held (*held: the mask before), then released with
 * this command's handler put back first. cli_write_file_atomic installs handlers of its own
 * (remove the temporary file, then die); with the signals held they never run, and a signal
 * that came meanwhile only sets `interrupted` once released. */
static void hold_signals(sigset_t *held) {
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof STOPPING / sizeof STOPPING[0]; i++) sigaddset(&block, STOPPING[i]);
    sigprocmask(SIG_BLOCK, &block, held);
}

static void release_signals(const sigset_t *held) {
    catch_interrupt();
    sigprocmask(SIG_SETMASK, held, NULL);
}

static int write_held(const char *path, const uint8_t *bytes, size_t size) {
    sigset_t held;
    hold_signals(&held);
    const int ok = cli_write_file_atomic(path, bytes, size);
    release_signals(&held);
    return ok;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- checkpoints ------------------------------------------------------------------------------------------ */

/* The files a run writes in OUT: a resumed run the first five (the checkpoint's under two names
 * each), a new run all seven. An input that is one of them is refused. */
static const char *const WRITTEN[] = {"loss.csv", "model.safetensors", "train_state.safetensors", "model.safetensors.next",
                                      "train_state.safetensors.next", "config.json", "tokenizer.json"};
enum { WRITTEN_RESUMED = 5, WRITTEN_NEW = 7 };
/* What makes OUT a run's folder (refused without --resume or --force), and whose leftovers
 * (NAME.next, NAME.tmp.XXXXXX) are removed. */
static const char *const RUN_FILES[] = {"config.json", "model.safetensors", "train_state.safetensors", "tokenizer.json",
                                        "loss.csv"};
enum { N_RUN_FILES = 5 };

/* Writes the checkpoint: its numbers checked, both files complete under ".next" names, then
 * renamed together; signals held throughout, and the ".next" files removed on failure. */
static int checkpoint(al_trainer *t, const char *dir, const train_settings *s, int64_t step) {
    char meta_step[32], meta_settings[512];
    snprintf(meta_step, sizeof meta_step, "%lld", (long long)step);
    snprintf(meta_settings, sizeof meta_settings,
             "hidden=%lld layers=%lld heads=%lld kv_heads=%lld ffn=%lld experts=%lld top_k=%lld vocab=%lld steps=%lld "
             "batch=%lld seq=%lld accum=%lld seed=%lld lr=%.17g clip=%.17g weight_decay=%.17g aux_coef=%.17g "
             "rope_theta=%.17g",
             (long long)s->hidden, (long long)s->layers, (long long)s->heads, (long long)s->kv_heads,
             (long long)al_trainer_hparams(t)->ffn_hidden,
             (long long)s->experts, (long long)s->top_k, (long long)s->vocab, (long long)s->steps, (long long)s->batch,
             (long long)s->seq, (long long)s->accum, (long long)s->seed, s->lr, s->clip, s->weight_decay, s->aux_coef,
             s->rope_theta);
    const char *meta[] = {"format", "pt", "step", meta_step, "attnlab_train", meta_settings};
    uint8_t *model = NULL, *state = NULL;
    size_t model_size = 0, state_size = 0;
    al_error err = {0};
    int ok = al_trainer_check(t, &err) == AL_OK && al_trainer_export(t, meta, 2, &model, &model_size, &err) == AL_OK &&
             al_trainer_export_state(t, meta, 3, &state, &state_size, &err) == AL_OK;
    if (!ok) cli_error("checkpoint of step %lld not written: %s", (long long)step, err.msg);
    char *model_next = cli_path_in(dir, "model.safetensors.next");
    char *state_next = cli_path_in(dir, "train_state.safetensors.next");
    char *model_path = cli_path_in(dir, "model.safetensors"), *state_path = cli_path_in(dir, "train_state.safetensors");
    ok = ok && model_next && state_next && model_path && state_path;
    sigset_t held;
    hold_signals(&held);
    if (ok) {
        ok = cli_write_file_atomic(model_next, model, model_size) && cli_write_file_atomic(state_next, state, state_size);
        if (ok && (rename(state_next, state_path) != 0 || rename(model_next, model_path) != 0)) {
            cli_error("checkpoint in '%s': %s", cli_show(dir), strerror(errno));
            ok = 0;
        }
        if (!ok) unlink(model_next), unlink(state_next);
    }
    release_signals(&held);
    free(model), free(state), free(model_next), free(state_next), free(model_path), free(state_path);
    return ok;
}

/* config.json for the folder: the one the weights' shapes imply, with the run's RoPE and MoE. */
static int write_config(al_trainer *t, const char *dir) {
    char *text = NULL, *path = cli_path_in(dir, "config.json");
    size_t len = 0;
    al_error err = {0};
    int ok = al_trainer_config_json(t, &text, &len, &err) == AL_OK;
    if (!ok) cli_error("config.json: %s", err.msg[0] ? err.msg : "out of memory");
    ok = ok && path && write_held(path, (const uint8_t *)text, len);
    free(text), free(path);
    return ok;
}

/* loss.csv of a run resumed at `step`: its header and the rows of steps 1..step, complete lines
 * only (a run killed after the checkpoint logged steps it did not save). Rewritten only if it
 * held more. */
static int trim_log(const char *path, int64_t step) {
    if (!cli_is_file(path)) return 1; /* none: begun anew by the first row */
    size_t size = 0;
    char *text = (char *)cli_read_file(path, (size_t)1 << 30, &size);
    if (!text) return 0;
    size_t keep = 0;
    for (size_t at = 0, line = 0; at < size; line++) {
        const char *nl = memchr(text + at, '\n', size - at);
        if (!nl) break; /* a row cut short */
        char *end = NULL;
        const long long row = strtoll(text + at, &end, 10);
        if (line > 0 && (end == text + at || *end != ',' || row > step)) break;
        at = keep = (size_t)(nl - text) + 1;
    }
    const int ok = keep == size || write_held(path, (const uint8_t *)text, keep);
    free(text);
    return ok;
}

/* --resume: the checkpoint in dir (model.safetensors and train_state.safetensors of one step, a
 * whole number from 0 to --steps) read into t, its step in *start. EXIT_OK, or the exit status
 * after one line saying why. */
static int resume_from(al_trainer *t, const char *dir, int64_t steps, int64_t *start) {
    char *mp = cli_path_in(dir, "model.safetensors"), *sp = cli_path_in(dir, "train_state.safetensors");
    size_t msz = 0, ssz = 0;
    uint8_t *mb = mp && sp ? cli_read_safetensors(mp, (size_t)2 << 30, &msz) : NULL;
    uint8_t *sb = mb ? cli_read_safetensors(sp, (size_t)4 << 30, &ssz) : NULL;
    al_safetensors *mst = NULL, *sst = NULL;
    al_error err = {0};
    int status = mb && sb ? EXIT_OK : EXIT_BAD_INPUT; /* a file that cannot be read: said already */
    if (status == EXIT_OK &&
        (al_st_parse_view(mb, msz, &mst, &err) != AL_OK || al_st_parse_view(sb, ssz, &sst, &err) != AL_OK)) {
        cli_error("--resume: '%s': %s", cli_show(mst ? sp : mp), err.msg);
        status = EXIT_BAD_INPUT;
    }
    const char *step_m = mst ? al_st_metadata(mst, "step") : NULL, *step_s = sst ? al_st_metadata(sst, "step") : NULL;
    if (status == EXIT_OK && (!step_m || !step_s)) {
        cli_error("--resume: '%s' holds no checkpoint of attnlab train (no step in %s)", cli_show(dir),
                  step_m ? "train_state.safetensors" : "model.safetensors");
        status = EXIT_BAD_INPUT;
    } else if (status == EXIT_OK && strcmp(step_m, step_s) != 0) {
        cli_error("--resume: the weights and the optimizer state in '%s' are of different steps ('%s', '%s')",
                  cli_show(dir), cli_show(step_m), cli_show(step_s));
        status = EXIT_BAD_INPUT;
    } else if (status == EXIT_OK && !cli_parse_int(step_m, 0, steps, start)) {
        cli_error("--resume: the checkpoint in '%s' is at step '%s', not a whole number from 0 to --steps %lld",
                  cli_show(dir), cli_show(step_m), (long long)steps);
        status = EXIT_BAD_INPUT;
    }
    if (status == EXIT_OK && al_trainer_import(t, mst, &err) != AL_OK) {
        cli_error("--resume: '%s': %s", cli_show(mp), err.msg);
        status = EXIT_BAD_INPUT;
    }
    if (status == EXIT_OK && al_trainer_import_state(t, sst, *start, &err) != AL_OK) {
        cli_error("--resume: '%s': %s", cli_show(sp), err.msg);
        status = EXIT_BAD_INPUT;
    }
    al_st_free(mst), al_st_free(sst);
    free(mb), free(sb), free(mp), free(sp);
    if (!mp || !sp) status = EXIT_FAILURE_ENV;
    return status;
}

/* ---- the command -------------------------------------------------------------------------------------------- */

int cmd_train(int argc, char **argv) {
    const char *corpus_path = NULL, *tokenizer_path = NULL, *out = NULL;
    int resume = 0, force = 0;
    /* ffn -1: MiniMind's width for the hidden size; 0: attention-only */
    train_settings s = {64, 2, 4, 2, -1, 0, 1, 0, 100, 8, 64, 1, 0, 0, 5e-4, 1.0, 0.01, 5e-4, 1e6};
    int64_t want_vocab = 0, threads = 0; /* threads 0: the machine's cores */
    struct { const char *flag; int64_t *v; int64_t lo, hi; } ints[] = {
        {"--hidden", &s.hidden, 8, 4096},   {"--layers", &s.layers, 1, 64},      {"--heads", &s.heads, 1, 64},
        {"--kv-heads", &s.kv_heads, 1, 64}, {"--ffn", &s.ffn, 0, 16384},         {"--moe", &s.experts, 0, 64},
        {"--moe-top-k", &s.top_k, 1, 64},   {"--steps", &s.steps, 1, 10000000},  {"--batch", &s.batch, 1, 64},
        {"--seq", &s.seq, 2, 4096},         {"--accum", &s.accum, 1, 1024},      {"--seed", &s.seed, 0, INT64_MAX},
        {"--checkpoint-every", &s.every, 0, 10000000}, {"--vocab", &want_vocab, AL_TOK_TRAIN_MIN_VOCAB, AL_TOK_MAX_VOCAB},
    };
    struct { const char *flag; double *v; double lo, hi; } reals[] = {
        {"--lr", &s.lr, 0.0, 10.0}, {"--clip", &s.clip, 0.0, 1e6}, {"--weight-decay", &s.weight_decay, 0.0, 10.0},
        {"--aux-coef", &s.aux_coef, 0.0, 100.0}, {"--rope-theta", &s.rope_theta, 1.0, 1e12},
    };
    for (int i = 0; i < argc; i++) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(flag, "--resume")) {
            resume = 1;
            continue;
        }
        if (!strcmp(flag, "--force")) {
            force = 1;
            continue;
        }
        int known = 0;
        if (!strcmp(flag, "--corpus")) corpus_path = value, known = 1;
        else if (!strcmp(flag, "--tokenizer")) tokenizer_path = value, known = 1;
        else if (!strcmp(flag, "--out")) out = value, known = 1;
        else if (!strcmp(flag, "--threads")) {
            if (!cli_parse_threads(value, &threads)) return EXIT_BAD_INPUT;
            known = 1;
        }
        for (size_t k = 0; !known && k < sizeof ints / sizeof ints[0]; k++)
            if (!strcmp(flag, ints[k].flag)) {
                known = 1;
                if (!cli_parse_int(value, ints[k].lo, ints[k].hi, ints[k].v)) {
                    cli_error("%s expects a whole number from %lld to %lld", flag, (long long)ints[k].lo, (long long)ints[k].hi);
                    return EXIT_BAD_INPUT;
                }
            }
        for (size_t k = 0; !known && k < sizeof reals / sizeof reals[0]; k++)
            if (!strcmp(flag, reals[k].flag)) {
                known = 1;
                if (!cli_parse_double(value, reals[k].v) || *reals[k].v < reals[k].lo || *reals[k].v > reals[k].hi) {
                    cli_error("%s expects a number from %g to %g", flag, reals[k].lo, reals[k].hi);
                    return EXIT_BAD_INPUT;
                }
            }
        if (!known) {
            cli_error("unknown option '%s' for train (see 'attnlab help')", cli_show(flag));
            return EXIT_BAD_INPUT;
        }
        if (!value) {
            cli_error("%s expects a value", flag);
            return EXIT_BAD_INPUT;
        }
        i++;
    }
    if (!corpus_path || !out) {
        cli_error("train needs --corpus FILE and --out DIR");
        return EXIT_BAD_INPUT;
    }
    if (resume && force) {
        cli_error("--resume goes on with the run in --out, --force replaces it: give one of them");
        return EXIT_BAD_INPUT;
    }
    const int tokenizer_given = tokenizer_path != NULL;
    char *resumed_tok = resume && !tokenizer_given ? cli_path_in(out, "tokenizer.json") : NULL; /* the run's own */
    if (resume && !tokenizer_given && !resumed_tok) return EXIT_FAILURE_ENV;
    if (!tokenizer_path) tokenizer_path = resumed_tok ? resumed_tok : DEFAULT_TOKENIZER;
    const int tokenizer_read = !(want_vocab && !tokenizer_given && !resume);
    struct stat sb;
    int status = EXIT_OK;
    if (stat(out, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        cli_error("--out '%s' is not a folder", cli_show(out));
        status = EXIT_BAD_INPUT;
    } else if (resume && stat(out, &sb) != 0) {
        cli_error("--out '%s': no such folder to resume from", cli_show(out));
        status = EXIT_BAD_INPUT;
    }
    /* never an input written over, whatever the flags: the same file by device and inode */
    for (int k = 0; status == EXIT_OK && k < (resume ? WRITTEN_RESUMED : WRITTEN_NEW); k++) {
        char *w = cli_path_in(out, WRITTEN[k]);
        const char *input = !w ? NULL : cli_same_file(corpus_path, w) ? "--corpus"
                                  : tokenizer_read && cli_same_file(tokenizer_path, w) ? "--tokenizer" : NULL;
        if (!w) status = EXIT_FAILURE_ENV;
        else if (input) {
            cli_error("%s '%s' is '%s', a file train writes: refusing to overwrite an input", input,
                      cli_show(!strcmp(input, "--corpus") ? corpus_path : tokenizer_path), cli_show(w));
            status = EXIT_BAD_INPUT;
        }
        free(w);
    }
    const char *held_file = status == EXIT_OK && !resume && !force ? cli_folder_holds(out, RUN_FILES, N_RUN_FILES) : NULL;
    if (held_file) {
        cli_error("--out '%s' already holds a run (%s): --resume goes on with it, --force replaces it", cli_show(out),
                  held_file);
        status = EXIT_BAD_INPUT;
    }
    if (status != EXIT_OK) {
        free(resumed_tok);
        return status;
    }

    /* 1. the corpus and the tokenizer: the one given (MiniMind's by default), or with --vocab V
     *    and no --tokenizer one of V tokens trained on the corpus (`attnlab train-tokenizer`'s) */
    size_t tok_size = 0, corpus_size = 0;
    char *corpus = (char *)cli_read_file(corpus_path, MAX_CORPUS_BYTES, &corpus_size);
    uint8_t *tok_bytes = NULL;
    al_tokenizer *tok = NULL;
    al_error terr = {0};
    if (corpus && !tokenizer_read) {
        char *json = NULL;
        al_tok_train_summary summary;
        if (al_tok_train_bpe(corpus, corpus_size, want_vocab, 0, &json, &tok_size, &summary, &terr) != AL_OK)
            cli_error("--vocab %lld: %s", (long long)want_vocab, terr.msg);
        else if (summary.vocab_size != want_vocab)
            cli_error("--vocab %lld: the corpus gives only %lld tokens", (long long)want_vocab, (long long)summary.vocab_size);
        else if (al_tok_hf_create((const uint8_t *)json, tok_size, 0, &tok, &terr) != AL_OK)
            cli_error("the trained tokenizer: %s", terr.msg);
        tok_bytes = (uint8_t *)json;
        if (!tok) free(corpus), corpus = NULL;
    } else if (corpus) {
        tok_bytes = cli_read_file(tokenizer_path, (size_t)64 << 20, &tok_size);
        tok = tok_bytes ? cli_load_tokenizer(tokenizer_path, 0) : NULL;
        if (tok && want_vocab && al_tok_vocab_size(tok) != want_vocab) {
            cli_error("--vocab %lld, but the tokenizer has %lld tokens", (long long)want_vocab, (long long)al_tok_vocab_size(tok));
            al_tok_free(tok);
            tok = NULL;
        }
        if (!tok) free(corpus), corpus = NULL;
    }
    free(resumed_tok);
    al_corpus text = {0};
    al_stream_batches batches;
    al_error err = {0};
    status = corpus && cli_encode_corpus(tok, corpus, corpus_size, s.seq + 1, &text) ? EXIT_OK : EXIT_BAD_INPUT;
    free(corpus);
    if (status == EXIT_OK && al_stream_batches_init(&batches, text.ids, text.n_tokens, text.split, s.batch, s.seq,
                                                    (uint64_t)s.seed, &err) != AL_OK) {
        cli_error("--corpus: %s", err.msg);
        status = EXIT_BAD_INPUT;
    }
    const al_batch_source source = al_stream_batch_source(&batches);
    s.vocab = tok ? al_tok_vocab_size(tok) : 0;

    /* 2. the model: MiniMind's shape from the flags, or the run being resumed */
    al_model_hparams hp = al_minimind_hparams_for(s.vocab, s.hidden, s.layers, s.heads, s.kv_heads);
    if (s.ffn >= 0) hp.ffn_hidden = s.ffn;
    hp.rope_base = s.rope_theta;
    if (s.experts) hp.n_experts = s.experts, hp.top_k = s.top_k, hp.moe_ffn_hidden = hp.ffn_hidden, hp.norm_topk_prob = 1;
    al_trainer *t = NULL;
    if (status == EXIT_OK && s.hidden % s.heads) {
        cli_error("--hidden %lld is not a multiple of --heads %lld", (long long)s.hidden, (long long)s.heads);
        status = EXIT_BAD_INPUT;
    }
    if (status == EXIT_OK && s.experts && !s.ffn) {
        cli_error("--moe needs experts of some width: --ffn 0 (attention-only) has none");
        status = EXIT_BAD_INPUT;
    }
    if (status == EXIT_OK && al_trainer_create(&hp, s.batch, s.seq, &t, &err) != AL_OK) {
        cli_error("%s", err.msg);
        status = err.status == AL_ERR_NOMEM ? EXIT_FAILURE_ENV : EXIT_BAD_INPUT;
    }
    if (status == EXIT_OK && al_trainer_set_threads(t, cli_threads_or_cores(threads), &err) != AL_OK) {
        cli_error("--threads: %s", err.msg);
        status = EXIT_BAD_INPUT;
    }
    /* the folder (made now that the input is known to be good), one run at a time writing into
     * it from here to its end */
    if (status == EXIT_OK && !resume && stat(out, &sb) != 0 && mkdir(out, 0755) != 0) {
        cli_error("--out '%s': %s", cli_show(out), strerror(errno));
        status = EXIT_BAD_INPUT;
    }
    const int lock = status == EXIT_OK ? cli_folder_lock(out) : -1;
    if (status == EXIT_OK && lock < 0) status = EXIT_FAILURE_ENV;
    int64_t start = 0;
    if (status == EXIT_OK && resume) status = resume_from(t, out, s.steps, &start);
    if (status == EXIT_OK && resume && start == s.steps) {
        fprintf(stderr, "attnlab: the run in '%s' has done its %lld steps: nothing to do\n", cli_show(out),
                (long long)start);
        close(lock);
        free(tok_bytes);
        al_corpus_free(&text);
        al_trainer_free(t);
        al_tok_free(tok);
        return EXIT_OK;
    }
    /* the input is good: what a killed run left goes (never an input), and with --force the old
     * run's checkpoint (before the new config.json, so the folder never pairs them) */
    catch_interrupt();
    if (status == EXIT_OK) {
        const char *inputs[] = {corpus_path, tokenizer_given ? tokenizer_path : NULL};
        if (cli_remove_leftovers(out, RUN_FILES, N_RUN_FILES, inputs, 2) < 0) status = EXIT_FAILURE_ENV;
    }
    for (int k = 1; status == EXIT_OK && force && k <= 2; k++) { /* WRITTEN[1], [2]: the checkpoint */
        char *p = cli_path_in(out, WRITTEN[k]);
        if (!p || (unlink(p) != 0 && errno != ENOENT)) {
            if (p) cli_error("--force: cannot remove '%s': %s", cli_show(p), strerror(errno));
            status = EXIT_FAILURE_ENV;
        }
        free(p);
    }
    char *loss_path = cli_path_in(out, "loss.csv");
    if (status == EXIT_OK && !loss_path) status = EXIT_FAILURE_ENV;
    if (status == EXIT_OK && resume && !trim_log(loss_path, start)) status = EXIT_FAILURE_ENV;
    if (status == EXIT_OK && !resume) {
        /* a new run (its folder made above, once the input was known to be good) */
        al_trainer_init_weights(t, (uint64_t)s.seed, &err);
        char *tp = cli_path_in(out, "tokenizer.json");
        static const char header[] = "step,loss,lr,grad_norm,tokens_per_s,held_out_loss\n";
        if (status != EXIT_OK || !tp || !write_held(tp, tok_bytes, tok_size) || !write_config(t, out) ||
            !write_held(loss_path, (const uint8_t *)header, sizeof header - 1))
            status = EXIT_FAILURE_ENV;
        free(tp);
    }
    free(tok_bytes);

    /* 3. the steps */
    FILE *log = status == EXIT_OK ? fopen(loss_path, "a") : NULL;
    if (status == EXIT_OK && !log) {
        cli_error("cannot append to '%s': %s", cli_show(loss_path), strerror(errno));
        status = EXIT_FAILURE_ENV;
    }
    int32_t *ids = malloc((size_t)(s.batch * s.seq) * sizeof *ids);
    if (!ids) status = EXIT_FAILURE_ENV;
    if (status == EXIT_OK) cli_print_split(&text);
    int64_t saved = resume ? start : -1; /* the step of the checkpoint on disk; -1: none */
    const int64_t every = s.every ? s.every : (s.steps >= 10 ? s.steps / 10 : 1);
    const double t0 = now_s();
    al_train_settings run = {s.batch, s.seq, s.accum, s.steps, s.lr, s.aux_coef, al_adamw_params_default()};
    run.adamw.clip = s.clip, run.adamw.weight_decay = s.weight_decay;
    int64_t step = start;
    for (; status == EXIT_OK && step < s.steps && !interrupted; step++) {
        const double ts = now_s();
        al_train_step_result r = {0};
        /* weights that stop being finite end the run here: the checkpoint on disk stays */
        if (al_train_step(t, &run, &source, step, ids, &r, &err) != AL_OK || al_trainer_check(t, &err) != AL_OK) {
            if (saved >= 0)
                cli_error("step %lld: %s; the checkpoint of step %lld is kept", (long long)(step + 1), err.msg,
                          (long long)saved);
            else
                cli_error("step %lld: %s", (long long)(step + 1), err.msg);
            status = EXIT_BAD_INPUT;
        }
        if (status != EXIT_OK) break;
        const double dt = now_s() - ts, elapsed = now_s() - t0;
        const double tps = (double)(s.batch * s.seq * s.accum) / dt;
        const int save = (step + 1) % every == 0 || step + 1 == s.steps;
        double held = NAN;
        if (save) held = al_train_held_out_loss(t, &run, &source, ids);
        fprintf(log, "%lld,%.6f,%.6g,%.6f,%.1f,", (long long)(step + 1), r.loss, r.lr, r.grad_norm, tps);
        if (save) fprintf(log, "%.6f", held);
        fprintf(log, "\n");
        fflush(log);
        const double left = elapsed / (double)(step + 1 - start) * (double)(s.steps - step - 1);
        fprintf(stderr, "\rstep %lld/%lld  loss %.4f  %.0f tokens/s  %.0f s left   ", (long long)(step + 1),
                (long long)s.steps, r.loss, tps, left);
        if (save && !checkpoint(t, out, &s, step + 1)) status = EXIT_FAILURE_ENV;
        else if (save) saved = step + 1;
    }
    if (status == EXIT_OK && interrupted && step > saved && !checkpoint(t, out, &s, step)) status = EXIT_FAILURE_ENV;
    if (status == EXIT_OK)
        fprintf(stderr, "\n%s after step %lld: %s\n", interrupted ? "interrupted" : "done", (long long)step, cli_show(out));
    for (size_t i = 0; i < sizeof STOPPING / sizeof STOPPING[0]; i++) signal(STOPPING[i], SIG_DFL);
    if (log) fclose(log);
    if (lock >= 0) close(lock);
    free(loss_path), free(ids);
    al_corpus_free(&text);
    al_trainer_free(t);
    al_tok_free(tok);
    if (status == EXIT_OK && interrupted) return 130;
    return status;
}
