/* main.c — the attnlab command line: dispatches to `demo` (the tutorial's scripts, printed
 * as PyTorch prints them), `forward` (one attention layer from safetensors weights), `bench`
 * (the core timed), `kv-growth` (the KV cache's size and a step's cost as a sequence grows),
 * `tokenize` (text to token ids and back with a tokenizer file), `train-tokenizer` (a
 * byte-level BPE tokenizer.json trained on a text file, as MiniMind trains its own) and
 * `cut-tokenizer` (a tokenizer.json cut to its first N ids), and the whole model's `generate`,
 * `logits` (with the experiments: --ablate, --lens, --target), `patch` and `inspect`. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char USAGE[] =
    "usage:\n"
    "  attnlab demo basic|attention|mlp-moe|block|generation [--lang zh|en] [--seed N]\n"
    "      run every example of 02-basic-components-demo.py (basic),\n"
    "      03-attention-demo.py (attention), 04-mlp-moe-demo.py (mlp-moe),\n"
    "      05-transformer-block-demo.py (block) or 10-generation-demo.py (generation)\n"
    "      and print what they print;\n"
    "      --seed N replaces every torch.manual_seed(...) value with N\n"
    "  attnlab forward --weights W.safetensors --input X.safetensors --out Y.safetensors\n"
    "                  [--layer N] [--rope-base B] [--eps E] [--prefill P] [--no-attn-weights]\n"
    "      run one attention layer on x [batch, seq, hidden]; writes output, attn_weights,\n"
    "      k_cache, v_cache and output_cached (prefill of P tokens, then 1-token decode steps)\n"
    "  attnlab bench [--hidden H] [--heads N] [--kv-heads M] [--head-dim D] [--seq S]\n"
    "                [--decode-at C] [--repeats R] [--rope-base B] [--seed N] [--threads 1]\n"
    "      time the core on random weights (default: MiniMind-3's layer, seq 512, cache 2048);\n"
    "      prints one JSON line with prefill_ms, decode_ms and prefill_gflops\n"
    "  attnlab bench --model PATH | --preset minimind-3 [--seq S] [--decode N] [--repeats R]\n"
    "                [--threads N]\n"
    "      a whole model's prefill and decode tokens/s (random weights for the preset)\n"
    "  attnlab bench --train [--hidden H] [--layers L] [--heads N] [--kv-heads M] [--ffn F]\n"
    "                [--vocab V] [--batch B] [--seq S] [--steps K]\n"
    "      MiniMind's training step timed (F 0: attention-only; default MiniMind's width)\n"
    "  attnlab kv-growth [--hidden H] [--heads N] [--kv-heads M] [--head-dim D]\n"
    "                    [--prompt P] [--steps S]\n"
    "      the KV cache's bytes (this layer, MHA, MQA) and each step's FLOPs (with the cache,\n"
    "      recomputing without it) after a prefill of P tokens and each of S decode steps;\n"
    "      defaults: the tutorial's layer (16, 4 heads, 2 KV heads, head_dim 8), P 4, S 3\n"
    "  attnlab generate --model PATH --ids \"1 2 3\" | --prompt TEXT | --chat TEXT [--think]\n"
    "                   [--tokenizer T] [--max-new-tokens N] [--temperature T] [--top-k K]\n"
    "                   [--top-p P] [--repetition-penalty R] [--seed S] [--print-ids] [--ignore-eos]\n"
    "                   [--ablate \"L.H,L.H,...\"] [--threads N]\n"
    "      continue the prompt with a model (a MiniMind folder or .pth, or a llama2.c .bin), sampling as\n"
    "      MiniMind does (defaults 0.85, 50, 0.85, 1.0; temperature 0: greedy) until the end token\n"
    "      (MiniMind's eos, llama2.c's BOS; --ignore-eos: go on past it, printing it), N new tokens\n"
    "      or the model's context; --prompt encodes TEXT and --chat one user message in\n"
    "      MiniMind's chat format (the reply's thinking closed, or left open with --think) with T,\n"
    "      by default the folder's tokenizer.json; with a tokenizer the text is streamed (--chat:\n"
    "      the reply alone); --ablate switches those heads (layer.head) off; --threads N computes\n"
    "      on N threads (default: the machine's cores; the same numbers on any number)\n"
    "  attnlab logits --model PATH --ids \"1 2 3\" --out OUT.safetensors [--ablate \"L.H,...\"]\n"
    "                 [--lens] [--target ID] [--threads N]\n"
    "      one pass over the ids: logits [seq, vocab], attn.N [n_heads, seq, seq] per layer,\n"
    "      route_ids.N / route_weights.N [seq, top_k] (MoE), resid_norm [layers + 1, seq];\n"
    "      --ablate: every tensor with those heads' outputs zeroed before o_proj; --lens adds the\n"
    "      logit lens, lens [layers + 1, seq, vocab]; --target adds token ID's direct logit\n"
    "      attribution: dla [layers, heads, seq], dla_embed [seq], dla_ffn [layers, seq]\n"
    "  attnlab patch --model PATH --clean IDS | --clean-text TEXT --corrupt IDS | --corrupt-text TEXT\n"
    "                --answer ID --wrong ID --out OUT.safetensors [--tokenizer T]\n"
    "                [--ablate \"L.H,...\"] [--full-forward]\n"
    "      activation patching from the clean prompt into the corrupted one (the same number\n"
    "      of tokens), metric logit(answer) - logit(wrong) at the last position: head\n"
    "      [layers, heads] (a head's output from the clean run), resid [layers, seq] (the\n"
    "      stream entering a block at a position), clean [1] and corrupt [1]; each patch runs\n"
    "      from its block up (--full-forward: a whole forward each, the same numbers)\n"
    "  attnlab inspect --model PATH\n"
    "      the model's configuration, parameter count, dtypes and tensors\n"
    "  attnlab tokenize --tokenizer T [--text TEXT] [--pieces] [--no-bos] [--eos]\n"
    "                   [--vocab-size N]\n"
    "  attnlab tokenize --tokenizer T --decode [--text IDS]\n"
    "      with llama2.c's tokenizer.bin or a Hugging Face tokenizer.json T (e.g.\n"
    "      models/stories260K/tok512.bin, models/minimind-tokenizer/tokenizer.json), print the\n"
    "      ids of TEXT (standard input when --text is absent) on one line, BOS first unless\n"
    "      --no-bos and EOS last with --eos (llama2.c's; a tokenizer.json adds neither, as\n"
    "      Hugging Face's encode does); --pieces prints the pieces instead, a space in one\n"
    "      shown as \xE2\x96\x81 and controls escaped; --decode prints the text of the ids\n"
    "      (invalid UTF-8 as \\xNN); --vocab-size N requires the file to hold N tokens\n"
    "  attnlab train --corpus FILE --out DIR [--tokenizer T | --vocab V] [--hidden H] [--layers L]\n"
    "                [--heads N] [--kv-heads M] [--ffn F] [--moe E --moe-top-k K] [--steps S]\n"
    "                [--batch B] [--seq T] [--accum A] [--lr LR] [--clip C] [--weight-decay W]\n"
    "                [--aux-coef A] [--rope-theta R] [--seed N] [--checkpoint-every K]\n"
    "                [--resume | --force] [--threads N]\n"
    "      train a MiniMind (QK-Norm, tied head; SwiGLU of width F, MiniMind's for H by default,\n"
    "      none with --ffn 0: attention-only; MoE with --moe) on a text corpus (documents\n"
    "      separated by empty lines or lines of %; the last 5% held out, of the tokens when\n"
    "      fewer than 20 documents) with MiniMind's\n"
    "      trainer: AdamW, clipping, its cosine schedule; T defaults to MiniMind's tokenizer, or\n"
    "      with --vocab V a tokenizer of V tokens is trained on the corpus first.\n"
    "      DIR becomes a MiniMind folder (config.json, model.safetensors, tokenizer.json) with\n"
    "      loss.csv and train_state.safetensors; --resume goes on from its last checkpoint.\n"
    "      A DIR already holding a run is refused unless --resume, or --force to replace it;\n"
    "      --threads N trains on N threads (default: the machine's cores; the same checkpoints)\n"
    "  attnlab eval --model PATH --corpus FILE [--tokenizer T] [--seq T]\n"
    "      the model's loss on the held-out part of the corpus (split as train splits it) beside\n"
    "      the best bigram model of its training part on the same targets (one JSON line)\n"
    "  attnlab convert --model PATH --out DIR [--dtype f16|f32] [--force]\n"
    "      a MiniMind folder or .pth written as a MiniMind folder: config.json, model.safetensors\n"
    "      (float16 by default, rounded to nearest) and the tokenizer.json beside the model; a\n"
    "      DIR that holds a model already is replaced only with --force\n"
    "  attnlab convert --model PATH [--tokenizer T] --out X.gguf [--dtype f16|f32]\n"
    "      the model and its tokenizer (the one beside a MiniMind, or T: llama2.c's tokenizer.bin\n"
    "      for a llama2.c checkpoint) as one GGUF file for llama.cpp: a MiniMind as qwen3\n"
    "      (qwen3moe for MoE), a llama2.c model as llama; matrices float16 by default\n"
    CLI_PTH_USAGE
    "      (with generate, logits, patch and inspect; MiniMind's defaults: heads from q_norm, top-1,\n"
    "      norm_topk_prob on, rope_theta 1e6, no YaRN, eps 1e-6)\n"
    "  attnlab train-tokenizer --corpus FILE --vocab N --out tokenizer.json [--min-frequency F]\n"
    "      train a byte-level BPE tokenizer on the UTF-8 text FILE as MiniMind's\n"
    "      train_tokenizer.py does (its 36 added tokens at ids 0..35, the 256 bytes, then\n"
    "      merges of the most frequent pair, ties to the lowest ids, until N tokens; pairs\n"
    "      seen fewer than F times, default 1, never merge) and write its tokenizer.json;\n"
    "      a corpus that runs out of pairs first writes nothing and says how far it got\n"
    "  attnlab cut-tokenizer --tokenizer T --vocab N --out tokenizer.json\n"
    "      MiniMind's tokenizer.json T (or one train-tokenizer wrote) cut to its first N ids\n"
    "      (N from 292: its 36 added tokens and the 256 bytes), with the merges whose halves\n"
    "      and result are among them, for a model with a vocabulary of N; laid out as\n"
    "      train-tokenizer writes (N of T's size gives MiniMind's file back byte for byte)\n"
    "  attnlab help\n";

static const char SHORT_USAGE[] =
    "usage: attnlab demo|forward|bench|kv-growth|generate|logits|patch|inspect|tokenize|train|train-tokenizer|cut-tokenizer ... "
    "(attnlab help for the options)\n";

static int run(int argc, char **argv) {
    if (argc < 2) {
        fputs(SHORT_USAGE, stderr);
        return EXIT_BAD_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(USAGE, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "demo")) return cmd_demo(argc - 2, argv + 2);
    if (!strcmp(cmd, "forward")) return cmd_forward(argc - 2, argv + 2);
    if (!strcmp(cmd, "bench")) return cmd_bench(argc - 2, argv + 2);
    if (!strcmp(cmd, "generate")) return cmd_generate(argc - 2, argv + 2);
    if (!strcmp(cmd, "logits")) return cmd_logits(argc - 2, argv + 2);
    if (!strcmp(cmd, "patch")) return cmd_patch(argc - 2, argv + 2);
    if (!strcmp(cmd, "inspect")) return cmd_inspect(argc - 2, argv + 2);
    if (!strcmp(cmd, "kv-growth")) return cmd_kv_growth(argc - 2, argv + 2);
    if (!strcmp(cmd, "tokenize")) return cmd_tokenize(argc - 2, argv + 2);
    if (!strcmp(cmd, "train")) return cmd_train(argc - 2, argv + 2);
    if (!strcmp(cmd, "convert")) return cmd_convert(argc - 2, argv + 2);
    if (!strcmp(cmd, "eval")) return cmd_eval(argc - 2, argv + 2);
    if (!strcmp(cmd, "train-tokenizer")) return cmd_train_tokenizer(argc - 2, argv + 2);
    if (!strcmp(cmd, "cut-tokenizer")) return cmd_cut_tokenizer(argc - 2, argv + 2);
    cli_error("unknown command '%s' (try 'attnlab help')", cli_show(cmd));
    return EXIT_BAD_INPUT;
}

int main(int argc, char **argv) {
    const int status = run(argc, argv);
    /* What was printed must have reached standard output (a full disk, a closed pipe). */
    const int write_failed = fflush(stdout) != 0 || ferror(stdout);
    const int saved = errno;
    if (fclose(stdout) != 0 || write_failed) {
        cli_error("cannot write to standard output: %s", strerror(write_failed ? saved : errno));
        return status == EXIT_OK ? EXIT_FAILURE_ENV : status;
    }
    return status;
}
