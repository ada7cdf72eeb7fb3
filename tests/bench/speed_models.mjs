// speed_models.mjs — the models and the work of the speed comparisons with llama.cpp
// (tests/bench/llama_cpp_speed.mjs natively, tests/bench/wllama.mjs in WebAssembly): the same
// weights on both sides, AttnLab reading its own files and llama.cpp the GGUF that
// `attnlab convert --out X.gguf` writes from them:
//   - stories260K (llama2.c's checkpoint, float32);
//   - a MiniMind-3-shaped model (hidden 768, 8 layers, 8/4 heads, head_dim 96, FFN 2432, vocabulary
//     6400: 64M parameters), written by AttnLab itself — `attnlab train` for one step from
//     MiniMind's initialisation — in float32, and that folder converted to float16 by `attnlab
//     convert --dtype f16`; its float16 GGUF is converted from the float16 folder, so both sides
//     hold the same float16 values.
// The work is al_model_bench_run's (`attnlab bench --model`): a prompt of fixed ids
// ((7 i + 3) mod vocab) prefilled in one pass, then one-token decode steps.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { ROOT, run } from '../lib/run.mjs';
import { peerFolder } from './npm_peer.mjs';

export const CLI = join(ROOT, 'build', 'attnlab');
const STORIES = join(ROOT, 'models', 'stories260K');
const MINIMIND_TOKENIZER = join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json');
const CORPUS = join(ROOT, 'models', 'minimind-fortunes', 'train-sample.txt');

// Each model's runs: a prompt of `prompt` ids prefilled, then `decode` steps. stories260K's
// context is 512, so its prefill of 512 and its decode (after one token) are two runs; the
// MiniMind-3-shaped model decodes after its prefill of 512, as run.mjs's MiniMind-3 rows do.
export const PREFILL = 512;
const STORIES_RUNS = [{ prompt: PREFILL, decode: 0 }, { prompt: 1, decode: 256 }];
const MINIMIND3_RUNS = [{ prompt: PREFILL, decode: 16 }];

// The ids of a run, as al_model_bench_run makes them: the prompt's, then each decode step's input.
export const benchIds = (n, vocab) => Array.from({ length: n }, (_, i) => (7 * i + 3) % vocab);

const cli = (args) => {
  const r = run(CLI, args);
  if (r.status !== 0) throw new Error(`attnlab ${args[0]}: ${(r.stderr || '').trim().split('\n').pop()}`);
  return r.stdout;
};

// The models, made into tests/out/peers/models/ once a process (a few seconds: no stale file
// outlives a change of the writer). Each: name, dtype, vocab, context (the tokens a run may reach),
// attnlab (the path `attnlab bench --model` reads), files (what the page's model lab reads:
// model, config, tokenizer), gguf, runs.
let made = null;
export function speedModels() {
  if (!made) made = makeModels();
  return made;
}

function makeModels() {
  const dir = peerFolder('models');
  mkdirSync(dir, { recursive: true });
  const stories = { name: 'stories260K', dtype: 'f32', vocab: 512, context: 512, attnlab: join(STORIES, 'stories260K.bin'),
    files: { model: join(STORIES, 'stories260K.bin'), tokenizer: join(STORIES, 'tok512.bin') }, gguf: join(dir, 'stories260K-f32.gguf'), runs: STORIES_RUNS };
  cli(['convert', '--model', stories.attnlab, '--tokenizer', stories.files.tokenizer, '--out', stories.gguf, '--dtype', 'f32']);

  const f32 = join(dir, 'minimind-3-f32'), f16 = join(dir, 'minimind-3-f16');
  for (const d of [f32, f16]) rmSync(d, { recursive: true, force: true });
  cli(['train', '--corpus', CORPUS, '--out', f32, '--tokenizer', MINIMIND_TOKENIZER, '--hidden', '768', '--layers', '8', '--heads', '8',
    '--kv-heads', '4', '--steps', '1', '--batch', '1', '--seq', '16']);
  rmSync(join(f32, 'train_state.safetensors'), { force: true }); // the optimiser's state: not the model
  cli(['convert', '--model', f32, '--out', f16, '--dtype', 'f16', '--force']);
  const minimind = (dtype, folder) => {
    const gguf = join(dir, `minimind-3-${dtype}.gguf`);
    cli(['convert', '--model', folder, '--out', gguf, '--dtype', dtype]);
    return { name: 'MiniMind-3-shaped', dtype, vocab: 6400, context: PREFILL + 16, attnlab: folder,
      files: { model: join(folder, 'model.safetensors'), config: join(folder, 'config.json'), tokenizer: join(folder, 'tokenizer.json') }, gguf, runs: MINIMIND3_RUNS };
  };
  return [stories, minimind('f32', f32), minimind('f16', f16)];
}

// Whether `attnlab bench --model` takes --threads, as the text of `attnlab help` says: the usage
// block that starts with that command, up to the next command.
export function helpHasModelThreads(text) {
  const at = text.indexOf('attnlab bench --model');
  if (at < 0) return false;
  const next = text.indexOf('\n  attnlab ', at);
  return /--threads/.test(text.slice(at, next < 0 ? undefined : next));
}

export function attnlabHasThreads() {
  const help = run(CLI, ['help']);
  return helpHasModelThreads(`${help.stdout}${help.stderr}`);
}

// One `attnlab bench --model` process: a warm-up run, then `repeats` timed ones, medians (the
// process's own clock around al_model_forward: loading excluded). threads: passed as --threads
// when the CLI takes it (hasThreads), else the core runs on its one thread.
export function attnlabBench(model, r, { repeats, threads = 1, hasThreads = false }) {
  const args = ['bench', '--model', model.attnlab, '--seq', r.prompt, '--decode', r.decode, '--repeats', repeats,
    '--read-mib', 1, ...(hasThreads ? ['--threads', threads] : [])].map(String);
  const j = JSON.parse(execFileSync(CLI, args, { encoding: 'utf8' }));
  return { prefill_tokens_per_s: j.prefill_tokens_per_s, decode_tokens_per_s: r.decode ? j.decode_tokens_per_s : undefined };
}

// AttnLab's greedy continuation of the ids, `n` ids: to show both sides run the same model.
export function attnlabGreedy(model, ids, n) {
  return cli(['generate', '--model', model.attnlab, '--ids', ids.join(' '), '--temperature', '0', '--max-new-tokens', String(n),
    '--print-ids', '--ignore-eos']).trim().split(/\s+/).map(Number);
}

// A text that AttnLab's tokenizer for the model (the one its GGUF holds: tests/bench/llama_cpp.mjs
// checks both encode alike) makes `n` ids of, the start token it adds included: "a a a …", each
// " a" one token. { text, ids }.
export function textOfTokens(model, n) {
  const encode = (words) => cli(['tokenize', '--tokenizer', model.files.tokenizer, '--text', Array(words).fill('a').join(' ')])
    .trim().split(/\s+/).filter(Boolean).map(Number);
  const words = n - (encode(1).length - 1);
  const ids = encode(words);
  if (ids.length !== n) throw new Error(`${model.name}'s tokenizer makes ${ids.length} ids of ${words} words "a", not ${n}`);
  return { text: Array(words).fill('a').join(' '), ids };
}

// The machine's one-minute load average now, for the reports: a comparison is made beside whatever
// else the cores run.
export const loadNow = () => loadavg()[0];
export const loadLine = (before, after) => `the one-minute load average ${before.toFixed(1)} before, ${after.toFixed(1)} after, on ${cpus().length} cores (others' work shares them: llama.cpp's threads wait for each other at every operation, so its two threads lose the most when a core is taken)`;
