// pth-memory.test.mjs — what reading a .pth costs when its tensors view one storage many times.
// The files are built by `test_pth --write DIR` (tests/test_pth.c, with its zip and pickle
// writers): 2,900 keys on one 512 KB storage, MiniMind's names on overlapping views of one,
// a view larger than its storage, a storage under three dtypes, 150,000 keys. `attnlab inspect`
// reads each under /usr/bin/time -v (Debian's `time`): refused with one line, or loaded; either
// way its peak resident memory stays under twice the file's size plus twice the model's weights
// in float32 (from the parameter count inspect prints; none for a refused file) plus 64 MB.
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

// Twice the file, twice the weights as float32, and 64 MB.
function bound(path, params) {
  return 2 * statSync(path).size + 2 * 4 * params + 64 * MB;
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
      assert.ok(r.peak < bound(path, 0), `${file}: peak ${(r.peak / MB).toFixed(1)} MB, bound ${(bound(path, 0) / MB).toFixed(1)} MB`);
      assert.equal(r.status, 2, `${file}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, message);
    }
  });
});

test('MiniMind\'s names on overlapping views of one storage, and the fixtures (tied weights), load within the memory bound', () => {
  withFiles((dir) => {
    const files = [join(dir, 'shared_named.pth'),
      ...['pth_dense_tied', 'pth_shared_tied', 'pth_state_dict', 'pth_attn_only', 'pth_moe_top2'].map((n) => join(MINIMIND, n, 'model.pth'))];
    for (const path of files) {
      const r = inspect(path);
      assert.equal(r.status, 0, `${path}: ${r.stderr}`);
      const params = Number(/^parameters (\d+) /m.exec(r.stdout)?.[1]);
      assert.ok(params > 0, r.stdout);
      if (path.endsWith('shared_named.pth')) assert.match(r.stdout, /layers 64, .*\n.*lm_head tied/);
      assert.ok(r.peak < bound(path, params), `${path}: peak ${(r.peak / MB).toFixed(1)} MB, bound ${(bound(path, params) / MB).toFixed(1)} MB`);
    }
  });
});
