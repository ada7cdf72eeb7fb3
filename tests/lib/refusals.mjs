// refusals.mjs — a command's refusals, from a table of [arguments, message] rows: each exits 2
// with one line on stderr that matches its message and prints nothing, and the output (the
// argument 'OUT', a file in `dir`) is left as it was: an existing file keeps its bytes, a missing
// one is not written; no temporary file is left in `dir`. The output's name ends in ext.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './run.mjs';

export function expectRefusals(cli, command, cases, dir, ext = '.json') {
  cases.forEach(([args, message], k) => {
    const out = join(dir, `refused-${command}-${k}${ext}`);
    const argv = [command, ...args.map((a) => (a === 'OUT' ? out : a))];
    const what = args.join(' ');
    writeFileSync(out, 'before');
    const r = run(cli, argv);
    assert.equal(r.status, 2, `${what}: exit ${r.status}\n${r.stderr}`);
    assert.match(r.stderr, /^attnlab: [^\n]*\n$/, `${what}: not one line`);
    assert.match(r.stderr, message, what);
    assert.equal(r.stdout, '', what);
    assert.equal(readFileSync(out, 'utf8'), 'before', `${what}: the existing file changed`);
    if (args.includes('OUT')) {
      rmSync(out);
      assert.equal(run(cli, argv).status, 2, what);
      assert.ok(!existsSync(out), `${what}: wrote a file`);
    }
  });
  assert.deepEqual(readdirSync(dir).filter((f) => f.includes('.tmp.')), [], 'a temporary file was left');
}
