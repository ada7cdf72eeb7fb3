// minimind-sample.test.mjs — `attnlab generate --seed S` samples the tokens MiniMind's generate
// samples after torch.manual_seed(S): temperature, repetition penalty, top-k, top-p, then
// torch.multinomial of the softmax, PyTorch's own draw. The runs are MiniMind's generate with
// do_sample=True as tests/reference/minimind_model.py follows it, on seven fixture checkpoints
// (dense, MoE top-1 and top-2, bf16, GQA, YaRN, untied) and the shipped minimind-fortunes, four
// samplers and four seeds each (tests/fixtures/gen_minimind_sample.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, VARIANTS, run } from './lib/run.mjs';

const fixture = JSON.parse(readFileSync(join(ROOT, 'tests', 'fixtures', 'minimind_sample', 'sample.json'), 'utf8'));
const models = [...new Set(fixture.runs.map((r) => r.model))];

for (const variant of VARIANTS) {
  const cli = join(variant.dir, 'attnlab');
  for (const model of models) {
    test(`${variant.name}: ${model}: generate --seed samples MiniMind's tokens`, () => {
      for (const r of fixture.runs.filter((x) => x.model === model)) {
        const args = ['generate', '--model', join(ROOT, model), '--ids', r.prompt_ids.join(' '),
          '--temperature', String(r.temperature), '--top-k', String(r.top_k), '--top-p', String(r.top_p),
          '--repetition-penalty', String(r.repetition_penalty), '--seed', String(r.seed),
          '--max-new-tokens', String(fixture.max_new_tokens), '--print-ids'];
        const out = run(cli, args);
        assert.equal(out.status, 0, `attnlab ${args.join(' ')}: ${out.stderr}`);
        const got = out.stdout.trim() ? out.stdout.trim().split(' ').map(Number) : [];
        // MiniMind's generate keeps the eos it stops at; the CLI stops before printing it.
        const want = r.stop === 'eos' ? r.ids.slice(0, -1) : r.ids;
        assert.deepEqual(got, want, `T ${r.temperature}, top-k ${r.top_k}, top-p ${r.top_p}, penalty ` +
          `${r.repetition_penalty}, seed ${r.seed}, prompt ${r.prompt_ids.join(' ')} (smallest p/q ratio ${r.min_ratio})`);
      }
    });
  }
}
