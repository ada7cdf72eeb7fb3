// generate.test.mjs — one generation loop: the page's model lab (web/core/attnlab-api.js on
// web/gen/attnlab.wasm, as the model view drives it) gives `attnlab generate`'s tokens and text on
// both shipped models, stories260K (llama2.c: BOS first, stops at BOS) and minimind-fortunes
// (MiniMind: stops at eos): greedy and sampled, runs that end at the stop token, the same runs
// going on past it (`--ignore-eos`, ModelLab.setIgnoreEos), and runs that end at the context.
// Then `--ignore-eos` itself: where the model ends its text early, generation goes on past the
// stop token with the option and stops there without it. (The same comparison natively, with
// more seeds and settings: tests/test_generate.c.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';
import { loadCore } from './lib/wasm.mjs';

const core = await loadCore();
const CLI = join(VARIANTS[0].dir, 'attnlab');
const STORIES = join(ROOT, 'models', 'stories260K', 'stories260K.bin');
const TOK512 = join(ROOT, 'models', 'stories260K', 'tok512.bin');
const FORTUNES = join(ROOT, 'models', 'minimind-fortunes');
const bytes = (path) => new Uint8Array(readFileSync(path));

const MODELS = {
  stories260K: {
    stop: 1, cliArgs: ['--model', STORIES, '--tokenizer', TOK512],
    files: () => ({ model: bytes(STORIES), tokenizer: bytes(TOK512) }),
  },
  'minimind-fortunes': {
    stop: 2, cliArgs: ['--model', FORTUNES],
    files: () => ({ model: bytes(join(FORTUNES, 'model.safetensors')), config: bytes(join(FORTUNES, 'config.json')),
      tokenizer: bytes(join(FORTUNES, 'tokenizer.json')) }),
  },
};

const GREEDY = { temperature: 0, topK: 50, topP: 0.85, repetitionPenalty: 1 };
const flagsOf = (p) => ['--temperature', String(p.temperature), '--top-k', String(p.topK), '--top-p', String(p.topP),
  '--repetition-penalty', String(p.repetitionPenalty)];

function generate(model, prompt, params, seed, maxNew, ignoreEos, extra = []) {
  const args = ['generate', ...MODELS[model].cliArgs, '--prompt', prompt, '--seed', String(seed), '--max-new-tokens',
    String(maxNew), ...flagsOf(params), ...(ignoreEos ? ['--ignore-eos'] : []), ...extra];
  const r = run(CLI, args);
  assert.equal(r.status, 0, `attnlab ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const idsOf = (stdout) => stdout.trim().split(' ').filter(Boolean).map(Number);

// The lab's steps as the model view's Play takes them: until maxNew, or until the core says
// no step would draw (lab.finish).
function labRun(lab, prompt, params, seed, maxNew, ignoreEos) {
  lab.setIgnoreEos(ignoreEos);
  const n = lab.prompt(prompt, seed);
  for (let i = 0; i < maxNew && lab.finish === 'going'; i++) lab.step(params);
  return { ids: Array.from(lab.ids()).slice(n), text: lab.text(), finish: lab.finish };
}

const CASES = [
  // [model, prompt, sampler, seed, max new tokens, ignore eos, how it ends without the CLI's limit]
  ['stories260K', 'Once upon a time', GREEDY, 0, 400, false, 'stop_token'],
  ['stories260K', 'Once upon a time', GREEDY, 0, 400, true, 'going'],
  ['stories260K', 'Lily and Tom', GREEDY, 0, 600, true, 'context'],
  ['stories260K', 'The cat sat on the', { temperature: 0.9, topK: 50, topP: 0.85, repetitionPenalty: 1 }, 1, 400, false, 'stop_token'],
  ['stories260K', 'The cat sat on the', { temperature: 0.9, topK: 50, topP: 0.85, repetitionPenalty: 1 }, 1, 400, true, 'going'],
  ['stories260K', 'Tom had a red ball.', { temperature: 1.1, topK: 20, topP: 0.9, repetitionPenalty: 1.2 }, 9, 600, true, 'context'],
  ['minimind-fortunes', '人生', GREEDY, 0, 60, false, 'stop_token'],
  ['minimind-fortunes', '人生', GREEDY, 0, 60, true, 'going'],
  ['minimind-fortunes', '朋友', GREEDY, 0, 60, false, 'stop_token'],
  ['minimind-fortunes', '人生', { temperature: 0.7, topK: 50, topP: 0.85, repetitionPenalty: 1 }, 3, 100, false, 'stop_token'],
  ['minimind-fortunes', '人生', { temperature: 0.7, topK: 50, topP: 0.85, repetitionPenalty: 1 }, 3, 100, true, 'going'],
  ['minimind-fortunes', 'Hello', { temperature: 0.85, topK: 20, topP: 0.9, repetitionPenalty: 1.1 }, 11, 80, true, 'going'],
];

for (const model of Object.keys(MODELS)) {
  test(`${model}: the model lab in WebAssembly gives \`attnlab generate\`'s ids and text, to the stop token, past it and to the context`, () => {
    const lab = core.createModelLab(MODELS[model].files());
    try {
      for (const [m, prompt, params, seed, maxNew, ignoreEos, ends] of CASES.filter((c) => c[0] === model)) {
        const what = `${JSON.stringify(prompt)} T ${params.temperature} seed ${seed}${ignoreEos ? ' --ignore-eos' : ''}`;
        const want = idsOf(generate(m, prompt, params, seed, maxNew, ignoreEos, ['--print-ids']));
        const text = generate(m, prompt, params, seed, maxNew, ignoreEos);
        const got = labRun(lab, prompt, params, seed, maxNew, ignoreEos);
        assert.deepEqual(got.ids, want, what);
        // The CLI streams the prompt, then the text; a MiniMind run prints its eos only with
        // --ignore-eos. At the end the CLI writes the bytes of a character cut short as \xNN,
        // where the lab's text waits for the token that would complete it.
        assert.equal(got.text, text.replace(/\n$/, '').replace(/(\\x[0-9A-F]{2})+$/, ''), `${what}: text`);
        assert.equal(got.finish, ends, `${what}: ends by ${ends}`);
        if (ends === 'stop_token') assert.ok(want.length < maxNew && !want.includes(MODELS[model].stop), `${what}: stops before the stop token`);
        if (ignoreEos && ends === 'going') assert.equal(want.length, maxNew, `${what}: goes on to the limit`);
        if (ends === 'context') assert.equal(lab.len, lab.context, `${what}: every position used`);
      }
    } finally {
      lab.free();
    }
  });
}

// ---- --ignore-eos ------------------------------------------------------------------------------

test('--ignore-eos: where the model emits its stop token early, generation goes on past it; without, it stops there', () => {
  for (const [model, prompt, maxNew] of [['minimind-fortunes', '人生', 30], ['stories260K', 'Once upon a time', 400]]) {
    const { stop } = MODELS[model];
    const without = idsOf(generate(model, prompt, GREEDY, 0, maxNew, false, ['--print-ids']));
    const withIt = idsOf(generate(model, prompt, GREEDY, 0, maxNew, true, ['--print-ids']));
    assert.ok(without.length < maxNew && !without.includes(stop), `${model}: ${without.length} tokens, then the stop token`);
    assert.deepEqual(withIt.slice(0, without.length), without, `${model}: the same tokens up to the stop token`);
    assert.equal(withIt[without.length], stop, `${model}: the stop token kept where it was drawn`);
    assert.equal(withIt.length, maxNew, `${model}: on to --max-new-tokens`);
    // The streamed ids (no --print-ids, no tokenizer) say the same, and the stats line counts them.
    const r = run(CLI, ['generate', '--model', model === 'stories260K' ? STORIES : FORTUNES, '--ids',
      idsOf(run(CLI, ['tokenize', '--tokenizer', model === 'stories260K' ? TOK512 : join(FORTUNES, 'tokenizer.json'),
        '--text', prompt]).stdout).join(' '), '--temperature', '0', '--max-new-tokens', String(maxNew), '--ignore-eos']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(idsOf(r.stdout), withIt, `${model}: --ids streamed`);
    assert.match(r.stderr, new RegExp(`generated ${maxNew} tokens`));
  }
});

test('generate --help names --ignore-eos', () => {
  const r = run(CLI, ['help']);
  assert.match(r.stdout + r.stderr, /\[--ignore-eos\]/);
  assert.match(r.stdout + r.stderr, /--ignore-eos: go on past it/);
});

test('an empty --prompt that encodes to no tokens is refused with one line', () => {
  const r = run(CLI, ['generate', '--model', FORTUNES, '--prompt', '']);
  assert.equal(r.status, 2);
  assert.equal(r.stderr, 'attnlab: --prompt: the prompt has no tokens\n');
});
