// valgrind.test.mjs — the native build under valgrind's memcheck: no invalid reads or writes,
// no use of uninitialised values, no leaks (definite, indirect or possible), on the CLI (both
// demos, kv-growth, forward on good and malformed files, tokenize, train-tokenizer,
// cut-tokenizer) and the C test programs of tests/lib/programs.mjs with their valgrind
// arguments (the long arithmetic sweeps skipped or shortened, as that list says). valgrind
// hides AVX-512 from the program, so this also runs the AVX2 kernels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROGRAMS, valgrindArgs } from './lib/programs.mjs';
import { ROOT } from './lib/run.mjs';

const work = mkdtempSync(join(tmpdir(), 'attnlab-valgrind-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const CLI = join(ROOT, 'build', 'attnlab');
const ATT = join(ROOT, 'tests', 'fixtures', 'attention');

function memcheck(program, args, expectedStatus = 0) {
  const r = spawnSync('valgrind', ['-q', '--error-exitcode=99', '--leak-check=full',
    '--show-leak-kinds=definite,indirect,possible', '--errors-for-leak-kinds=definite,indirect,possible',
    program, ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.notEqual(r.status, 99, `valgrind found errors in ${program} ${args.join(' ')}:\n${r.stderr}`);
  assert.equal(r.status, expectedStatus, `${program} ${args.join(' ')} exited ${r.status}:\n${r.stderr.slice(-2000)}`);
}

test('valgrind: every demo, in both languages', () => {
  for (const demo of ['basic', 'attention', 'mlp-moe', 'block']) for (const lang of ['zh', 'en']) memcheck(CLI, ['demo', demo, '--lang', lang]);
});

test('valgrind: forward on fixtures (GQA, MQA, bf16 MiniMind names) and on malformed files', () => {
  for (const name of ['seeds_ex7_gqa_4x2_hd8_h16_b1_s7_p4', 'mqa_4x1_hd16_h32_b2_s7_p2', 'minimind_like_h256_gqa_8x4_hd32_bf16_layer3_b1_s9_p4']) {
    const dir = join(ATT, name);
    const flags = readFileSync(join(dir, 'args.txt'), 'utf8').trim().split(/\s+/).filter(Boolean);
    memcheck(CLI, ['forward', '--weights', join(dir, 'weights.safetensors'), '--input', join(dir, 'input.safetensors'), '--out', join(work, `${name}.out`), ...flags]);
  }
  const good = join(ATT, 'seeds_ex7_gqa_4x2_hd8_h16_b1_s7_p4', 'input.safetensors');
  for (const bad of ['header_len_absurd.safetensors', 'json_truncated.safetensors', 'offsets_outside_data.safetensors', 'data_truncated.safetensors', 'overlap.safetensors', 'deep_nesting.safetensors']) {
    assert.ok(existsSync(join(ROOT, 'tests', 'malformed', bad)), bad);
    memcheck(CLI, ['forward', '--weights', join(ROOT, 'tests', 'malformed', bad), '--input', good, '--out', join(work, 'never.out')], 2);
  }
});

test('valgrind: tokenize (ids, pieces, decode) and a refused tokenizer file', () => {
  const tok = join(ROOT, 'models', 'stories260K', 'tok512.bin');
  memcheck(CLI, ['tokenize', '--tokenizer', tok, '--text', 'Once upon a time, 中文 😀']);
  memcheck(CLI, ['tokenize', '--tokenizer', tok, '--text', 'café\tline', '--pieces', '--no-bos', '--eos']);
  memcheck(CLI, ['tokenize', '--tokenizer', tok, '--decode', '--text', '1 403 231 187 176 231']);
  memcheck(CLI, ['tokenize', '--tokenizer', tok, '--vocab-size', '600', '--text', 'a'], 2);
  memcheck(CLI, ['tokenize', '--tokenizer', tok, '--decode', '--text', '1 x'], 2);
});

test('valgrind: train-tokenizer, written and refused', () => {
  const corpus = join(ROOT, 'README.md');
  memcheck(CLI, ['train-tokenizer', '--corpus', corpus, '--vocab', '800', '--out', join(work, 'trained.json')]);
  memcheck(CLI, ['tokenize', '--tokenizer', join(work, 'trained.json'), '--text', 'attention 注意力']);
  memcheck(CLI, ['train-tokenizer', '--corpus', corpus, '--vocab', '2097152', '--out', join(work, 'never.json')], 2);
  memcheck(CLI, ['train-tokenizer', '--corpus', join(ROOT, 'models', 'stories260K', 'tok512.bin'), '--vocab', '800',
    '--out', join(work, 'never.json')], 2);
});

test('valgrind: cut-tokenizer, written and refused', () => {
  const tok = join(ROOT, 'models', 'minimind-tokenizer', 'tokenizer.json');
  memcheck(CLI, ['cut-tokenizer', '--tokenizer', tok, '--vocab', '512', '--out', join(work, 'cut.json')]);
  memcheck(CLI, ['cut-tokenizer', '--tokenizer', tok, '--vocab', '6401', '--out', join(work, 'never.json')], 2);
});

for (const name of Object.keys(PROGRAMS)) {
  const args = valgrindArgs(name);
  const skip = args === null && 'not run under valgrind (tests/lib/programs.mjs says why)';
  test(`valgrind: ${name}`, { skip }, () => memcheck(join(ROOT, 'build', 'tests', name), args));
}
