/* cli.h — shared pieces of the attnlab command line: one-line messages, strict number
 * parsing, file and standard input reading with a size cap, all-or-nothing file writing, and
 * the exit codes. */
#ifndef ATTNLAB_CLI_H
#define ATTNLAB_CLI_H

#include "attnlab.h"

#include <stddef.h>
#include <stdint.h>

enum {
    EXIT_OK = 0,
    EXIT_FAILURE_ENV = 1, /* out of memory, cannot write the output */
    EXIT_BAD_INPUT = 2    /* bad flags, bad files, bad sizes */
};

/* Prints "attnlab: <message>" on one line to stderr: control characters, invisible format
 * characters (bidirectional overrides, zero-width) and bytes that are not UTF-8 are shown
 * escaped, and an overlong message is cut. */
void cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* User text (a path, a flag) for a message: escaped as cli_error does and cut at 160 bytes with
 * "...". Returns one of a few static buffers (enough for the arguments of one message). */
const char *cli_show(const char *s);


/* Whole-string parses; 0 on any junk, overflow or value outside [lo, hi]. */
int cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
int cli_parse_double(const char *s, double *out); /* finite values only */

/* A command's option that takes a value: "--vocab" and where the argument after it goes. */
typedef struct {
    const char *name;
    const char **value;
} cli_flag;

/* Reads argv[0, argc) as "--name value" pairs, each name one of flags[0, n), its value into
 * *flags[k].value (a name given twice: the last value). 0 after printing why: a name that is
 * not one of them (the message names the command, cmd) or one with no value after it. */
int cli_parse_flags(int argc, char **argv, const char *cmd, const cli_flag *flags, int n);

/* Token ids written "1 2 3" (or with commas) into ids[cap]: their count, or -1 after printing
 * why (not a whole number >= 0, more than cap of them). */
int64_t cli_parse_ids(const char *text, int32_t *ids, int64_t cap);

/* --ablate "L.H,L.H,...": those heads (layer, head) of m switched off (al_model_set_ablation).
 * 1, or 0 after printing why (not LAYER.HEAD, none given, a layer or head outside the model). */
int cli_set_ablation(al_model *m, const char *text);

/* The most a command writes into one result file (`logits` with --lens, `patch`): a larger
 * result is refused before any work, with its size. */
#define CLI_MAX_RESULT_BYTES ((int64_t)1 << 30)

/* Reads a safetensors file (at most max_bytes) into a malloc'd buffer: a regular file only
 * (checked before opening it, so a FIFO cannot block), its header read and checked before its
 * data is read. On failure prints the error and returns NULL. */
uint8_t *cli_read_safetensors(const char *path, size_t max_bytes, size_t *size);

/* --threads N of the commands that run or train a model: its value (1 to AL_MAX_THREADS), or 0
 * after printing why; the count it stands for (0, the flag not given: the machine's cores); and
 * the model set to compute on that many, or 0 after printing why. */
int cli_parse_threads(const char *value, int64_t *threads);
int64_t cli_threads_or_cores(int64_t threads);
int cli_set_threads(al_model *m, int64_t threads);

/* A regular file of at most max_bytes (checked as cli_read_file checks it) opened to be read
 * piece by piece through s->src (pread: where it lies, never whole). cli_source_open: 0, or -1
 * after printing why. */
typedef struct {
    al_byte_source src;
    int fd;
} cli_source;
int cli_source_open(cli_source *s, const char *path, size_t max_bytes);
void cli_source_close(cli_source *s);

/* Reads a whole regular file of at most max_bytes (checked before reading, and a FIFO is
 * refused before it is opened) into a malloc'd buffer. On failure prints the error and returns
 * NULL. */
uint8_t *cli_read_file(const char *path, size_t max_bytes, size_t *size);

/* Reads standard input to its end, at most max_bytes, into a malloc'd buffer with a NUL after
 * the *size bytes (which may hold NULs themselves). On failure (more than max_bytes too)
 * prints the error and returns NULL. */
uint8_t *cli_read_stdin(size_t max_bytes, size_t *size);

/* Checks before any work that `out` can receive a result: a non-empty path, in an existing
 * folder, not a folder, not an existing device, FIFO or other non-regular file (never replaced),
 * and not the same file as any of the inputs. Prints the error (naming `out`) and returns 0. */
int cli_check_output(const char *out, const char *const *inputs, int n_inputs);


/* Writes bytes to path via a temporary file in the same directory and rename(2), so the path
 * either holds the complete new file or is untouched; the temporary file is removed if
 * SIGINT, SIGTERM, SIGHUP or SIGPIPE ends the process first. Prints the error (naming path)
 * and returns 0 on failure. */
int cli_write_file_atomic(const char *path, const uint8_t *bytes, size_t size);

/* What a MiniMind .pth cannot say about its model (al_pth_flags), as the commands that load a
 * model take it: --heads N, --moe-top-k K, --no-norm-topk-prob, --rope-theta T, --yarn, --eps E. */
typedef struct {
    al_pth_flags flags;
    const char *given; /* the first of these flags on the command line; NULL if none */
} cli_pth_options;

void cli_pth_options_init(cli_pth_options *o);

/* If argv[i] is one of the .pth flags: reads it (and its value) into o and returns how many
 * arguments it took (1 or 2); 0 if it is not one of them; -1 after printing why its value is
 * refused. */
int cli_parse_pth_flag(int argc, char **argv, int i, cli_pth_options *o);

/* "  --heads N ..." lines for a command's usage. */
#define CLI_PTH_USAGE                                                                            \
    "      a .pth (torch.save of a MiniMind state_dict) takes its configuration from the\n"      \
    "      tensors' shapes and these flags: [--heads N] (needed without QK-Norm)\n"               \
    "      [--moe-top-k K] [--no-norm-topk-prob] [--rope-theta T] [--yarn] [--eps E]\n"

/* The model at `path` — a MiniMind / Hugging Face folder (config.json + model.safetensors), a
 * MiniMind .pth (its configuration from its shapes and `pth`, which may be NULL) or a llama2.c
 * checkpoint — with want_context positions reserved (at most the model's own; 0 or less: all
 * of it) and forward passes of up to max_step tokens (clamped to the context). NULL after
 * printing why, with *status the exit code. */
al_model *cli_load_model(const char *path, int64_t want_context, int64_t max_step,
                         const cli_pth_options *pth, al_model_file_kind *kind, int *status);

/* A MiniMind .pth's index and config.json (al_pth_model_read_source: its tensors stay in the
 * file): free *out with al_pth_model_free. 0 after printing why. */
int cli_read_pth(const char *path, const al_pth_flags *flags, al_pth_model *out, int *status);

/* Every file cli_load_model reads for the model at a path, and the tokenizer.json that goes
 * with a MiniMind model (which may not exist): a folder's config.json, model.safetensors and
 * tokenizer.json; a .pth (by its name) and the tokenizer.json in its folder; any other file
 * (a llama2.c checkpoint) alone. Each a new string, NULL where the kind has none. */
enum { CLI_MODEL_CONFIG, CLI_MODEL_WEIGHTS, CLI_MODEL_TOKENIZER, CLI_MODEL_FILES };
typedef struct {
    al_model_file_kind kind;
    char *files[CLI_MODEL_FILES];
} cli_model_paths;

/* 1 with *out filled; 0 if path names nothing (nothing printed, *out all NULL); -1 after
 * printing that memory ran out. Free with cli_model_paths_free (all NULL: a no-op). */
int cli_model_paths_get(const char *path, cli_model_paths *out);
void cli_model_paths_free(cli_model_paths *p);

/* The model's tokenizer.json (cli_model_paths' CLI_MODEL_TOKENIZER) in a new string, whether or
 * not that file exists; NULL for a llama2.c checkpoint, a path that names nothing, or when
 * memory ran out (which is then printed). */
char *cli_model_tokenizer(const char *path);

/* cli_check_output for a command that reads the model at model_path (NULL: none): every file of
 * cli_model_paths, the path itself, and others[0, n_others) (at most CLI_MAX_OTHER_INPUTS: a
 * --tokenizer, a corpus) are its inputs. */
#define CLI_MAX_OTHER_INPUTS 4
int cli_check_model_output(const char *out, const char *model_path, const char *const *others, int n_others);

/* 1 if path names a regular file (following links), else 0; nothing printed. */
int cli_is_file(const char *path);

#define CLI_MAX_TOKENIZER_BYTES ((size_t)64 << 20) /* Llama 3's 128K-token vocabulary is ~2 MiB */

/* The tokenizer in the file at path (vocab_size 0: as many tokens as it holds), or NULL after
 * printing why. */
al_tokenizer *cli_load_tokenizer(const char *path, int64_t vocab_size);

int cmd_demo(int argc, char **argv);
int cmd_forward(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_logits(int argc, char **argv);
int cmd_patch(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_kv_growth(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
/* The corpus text as train and eval split it (al_corpus_encode) into *c: 1, or 0 after printing
 * why ("--corpus: ..."). */
int cli_encode_corpus(const al_tokenizer *tok, const char *text, size_t len, int64_t window, al_corpus *c);
/* "corpus: N documents, T tokens; held out: ..." on stderr: which split was used. */
void cli_print_split(const al_corpus *c);
int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_convert(int argc, char **argv);
/* convert with --out X.gguf (convert_gguf.c): the model at model_path and its tokenizer
 * (tokenizer_path, or NULL: the one beside a MiniMind) as one GGUF file. The exit code. */
int cli_convert_gguf(const char *model_path, const char *tokenizer_path, const char *out, int f16,
                     const cli_pth_options *pth);
int cmd_train_tokenizer(int argc, char **argv);
int cmd_cut_tokenizer(int argc, char **argv);

/* ---- a folder a command writes into (out_folder.c) ---- */

/* 1 if a and b both exist and are one file (the same device and inode: through links and other
 * names too); nothing printed. */
int cli_same_file(const char *a, const char *b);
/* "DIR/NAME" in a new string; NULL after printing "out of memory". */
char *cli_path_in(const char *dir, const char *name);
/* The first of names[0, n) that dir holds (a file, a folder, a link), or NULL. */
const char *cli_folder_holds(const char *dir, const char *const *names, int n);
/* The first of a MiniMind folder's files (cli_model_paths: config.json, model.safetensors,
 * tokenizer.json) that the folder dir holds, or NULL (none, or dir is no folder). */
const char *cli_folder_has_model(const char *dir);
/* Takes the folder dir (which exists) for this process alone until it ends (train, convert): a
 * descriptor to keep open, or -1 after printing that another run holds it (or why it cannot be
 * taken). The lock is the system's (flock): a run killed in any way leaves none behind. */
int cli_folder_lock(const char *dir);
/* Removes from dir what a write of one of names[0, n) killed before its rename leaves:
 * NAME.next, NAME.tmp.XXXXXX and NAME.next.tmp.XXXXXX (cli_write_file_atomic's temporary
 * files) — never one that is the same file as one of keep[0, n_keep). Returns how many it
 * removed (0 if dir does not exist), -1 after printing why. */
int cli_remove_leftovers(const char *dir, const char *const *names, int n, const char *const *keep, int n_keep);

#endif
