// make_tokenizer_seeds.mjs — the seed corpus of fuzz_tokenizer_json (tests/fuzz/seeds_tokenizer/,
// committed): each seed is the harness's input, a byte k, k bytes of text, then a tokenizer.json.
// MiniMind's whole file; its first 800 ids (the added tokens, the 256 bytes and the merges
// among them) as it is and with each pre-tokenizer option changed, in a Sequence, with merges
// written "a b"; the small tokenizer of tests/lib/hf-json.mjs; and a few malformed files.
//
//     node tests/fuzz/make_tokenizer_seeds.mjs
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { small } from '../lib/hf-json.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUT = join(HERE, 'seeds_tokenizer');
const MINIMIND = readFileSync(join(HERE, '..', '..', 'models', 'minimind-tokenizer', 'tokenizer.json'), 'utf8');

function seed(name, text, json) {
  const t = Buffer.from(text, 'utf8').subarray(0, 255);
  const j = Buffer.from(typeof json === 'string' ? json : JSON.stringify(json, null, 1), 'utf8');
  writeFileSync(join(OUT, name), Buffer.concat([Buffer.from([t.length]), t, j]));
}

// MiniMind's tokenizer cut to its first n ids: what refers to a later id goes.
function cut(n) {
  const o = JSON.parse(MINIMIND);
  o.model.vocab = Object.fromEntries(Object.entries(o.model.vocab).filter(([, id]) => id < n));
  const has = (t) => t in o.model.vocab;
  o.model.merges = o.model.merges.filter(([a, b]) => has(a) && has(b) && has(a + b));
  o.added_tokens = o.added_tokens.filter((a) => a.id < n);
  return o;
}

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT);
const TEXT = '你好，世界！Hello world <|im_start|>user\n  tabs\t\t数字 123 😀<think>\n\n</think>';
seed('minimind', TEXT, MINIMIND);
seed('minimind-800', TEXT, cut(800));
const prefix = cut(800);
prefix.pre_tokenizer.add_prefix_space = true;
seed('minimind-800-prefix-space', 'a<|im_end|>b c', prefix);
const noRegex = cut(800);
noRegex.pre_tokenizer.use_regex = false;
seed('minimind-800-no-regex', "it's 10 o'clock\n\n", noRegex);
const sequence = cut(800);
sequence.pre_tokenizer = { type: 'Sequence', pretokenizers: [sequence.pre_tokenizer] };
sequence.post_processor = { type: 'ByteLevel', trim_offsets: false };
sequence.model.merges = sequence.model.merges.map(([a, b]) => `${a} ${b}`);
seed('minimind-800-sequence-old-merges', '中文 text', sequence);
seed('small', 'hehe<|x|> he', small());
const dup = small();
dup.model.merges.push(['h', 'e']);
seed('small-merge-twice', 'he', dup);
const gap = small();
gap.added_tokens[0].id = 300;
seed('small-added-gap', 'he', gap);
seed('not-json', 'x', '{"model": {"vocab": ');
console.log(`wrote ${readdirSync(OUT).length} seeds to ${OUT}`);
