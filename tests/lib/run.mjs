// run.mjs — runs a built program for the tests and captures its exit status and output.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// The CLI builds the tests run against: the plain one and the ASan+UBSan one.
export const VARIANTS = [
  { name: 'native', dir: join(ROOT, 'build') },
  { name: 'asan', dir: join(ROOT, 'build', 'asan') },
].filter((v) => existsSync(join(v.dir, 'attnlab')));

export function run(program, args, options = {}) {
  const r = spawnSync(program, args, {
    cwd: ROOT,
    encoding: options.encoding ?? 'utf8',
    input: options.input,
    maxBuffer: 64 << 20,
    env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}
