// pth-memory.test.mjs — what reading a .pth costs: the file is never held beside the model.
// The files are built by `test_pth --write DIR` (tests/test_pth.c, with its zip and pickle
// writers): 2,900 keys on one 512 KB storage, MiniMind's names on overlapping views of one,
// a view larger than its storage, a storage under three dtypes, 150,000 keys, and a float16
// MiniMind of 29 M parameters (58 MB). `attnlab inspect` reads each under /usr/bin/time -v
// (Debian's `time`). A refused file stays under its own size (its pickle, read whole, is most of
// it) plus 16 MB. A loaded one stays under its model's weights in the dtype they are held in
// (the file's: 2 bytes for float16 or bfloat16, 4 for float32 or mixed), its KV cache (inspect
// reserves one position) and 16 MB: no room for the file beside them (58 MB for the float16
// model), nor for a float32 copy of its weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, VARIANTS } from './lib/run.mjs';

const TIME = '/usr/bin/time';
const cli = join(VARIANTS[0].dir, 'attnlab');
const MINIMIND = join(ROOT, 'tests', 'fixtures', 'minimind');
const MB = 1 << 20;

// `inspect --model path` under /usr/bin/time -v: its status, stdout, its own stderr and its
// peak resident set in bytes. The timeout only guards against a hang (each read takes well
// under 6 s).
function inspect(path) {
  const r = spawnSync(TIME, ['-v', cli, 'inspect', '--model', path], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.signal, null, `${path}: killed by ${r.signal}`);
  // time's report follows the program's own stderr, after "Command exited with non-zero status N"
  const report = r.stderr.indexOf('\tCommand being timed:'), exited = r.stderr.lastIndexOf('Command exited with', report);
  assert.ok(report >= 0, `no /usr/bin/time -v report:\n${r.stderr}`);
  const at = exited >= 0 ? exited : report;
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr.slice(report));
  assert.ok(rss, r.stderr);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.slice(0, at), peak: Number(rss[1]) * 1024 };
}

const MARGIN = 16 * MB;

// A refused file: its size (the pickle is read whole) and the margin.
function refusedBound(path) {
  return statSync(path).size + MARGIN;
}

// A loaded model from inspect's report: its weights as held, its KV cache (float32 keys and
// values for the one position inspect reserves) and the margin.
function loadedBound(stdout) {
  const params = Number(/^parameters (\d+) /m.exec(stdout)?.[1]);
  const dtype = /^parameters \d+ \([^)]*\), (F16|BF16|F32|mixed dtypes) in the \.pth/m.exec(stdout)?.[1];
  const shape = /layers (\d+), heads \d+, kv heads (\d+).*head_dim (\d+)/.exec(stdout);
  assert.ok(params > 0 && dtype && shape, stdout);
  const held = dtype === 'F16' || dtype === 'BF16' ? 2 : 4;
  const kv = 2 * Number(shape[1]) * Number(shape[2]) * Number(shape[3]) * 4;
  return { params, bound: held * params + kv + MARGIN };
}

function withFiles(fn) {
  assert.ok(existsSync(TIME), `${TIME} is missing: install Debian's time package (bash build.sh deps)`);
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-pth-'));
  try {
    const w = spawnSync(join(VARIANTS[0].dir, 'tests', 'test_pth'), ['--write', dir], { encoding: 'utf8' });
    assert.equal(w.status, 0, w.stderr);
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a .pth whose keys view one storage many times is refused with one line, within the memory bound', () => {
  withFiles((dir) => {
    for (const [file, message] of [
      ['shared_foreign.pth', /shared_foreign\.pth: pth: the state_dict's 't0' is not a MiniMind weight/],
      ['view_too_big.pth', /view_too_big\.pth: pth: a tensor at pickle byte \d+ \(1099511627776 elements from offset 0\) runs past the end of storage '0'/],
      ['storage_retyped.pth', /storage_retyped\.pth: pth: storage '0' is named again at pickle byte \d+ with another type or size/],
      ['many_keys.pth', /many_keys\.pth: pickle: more than 131072 dict items at byte \d+/],
    ]) {
      const path = join(dir, file);
      const r = inspect(path);
      assert.ok(r.peak < refusedBound(path), `${file}: peak ${(r.peak / MB).toFixed(1)} MB, bound ${(refusedBound(path) / MB).toFixed(1)} MB`);
      assert.equal(r.status, 2, `${file}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, message);
    }
  });
});

test('MiniMind\'s names on overlapping views of one storage, a 58 MB float16 model and the fixtures (tied weights) load within the memory bound', () => {
  withFiles((dir) => {
    const files = [join(dir, 'shared_named.pth'), join(dir, 'big_f16.pth'),
      ...['pth_dense_tied', 'pth_shared_tied', 'pth_state_dict', 'pth_attn_only', 'pth_moe_top2'].map((n) => join(MINIMIND, n, 'model.pth'))];
    for (const path of files) {
      const r = inspect(path);
      assert.equal(r.status, 0, `${path}: ${r.stderr}`);
      const { params, bound } = loadedBound(r.stdout);
      if (path.endsWith('shared_named.pth')) assert.match(r.stdout, /layers 64, .*\n.*lm_head tied/);
      if (path.endsWith('big_f16.pth')) {
        assert.equal(params, 28976640, r.stdout);
        // the bound leaves no room for the file beside the weights
        assert.ok(statSync(path).size > bound - 2 * params, `${path}: the bound would hold the file`);
      }
      assert.ok(r.peak < bound, `${path}: peak ${(r.peak / MB).toFixed(1)} MB, bound ${(bound / MB).toFixed(1)} MB`);
    }
  });
});
