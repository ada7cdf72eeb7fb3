// run.mjs — runs a built program for the tests and captures its exit status and output: one run
// at a time (run), or many side by side (runAsync in inPool).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// The CLI builds the tests run against: the plain one and the ASan+UBSan one.
export const VARIANTS = [
  { name: 'native', dir: join(ROOT, 'build') },
  { name: 'asan', dir: join(ROOT, 'build', 'asan') },
].filter((v) => existsSync(join(v.dir, 'attnlab')));

const ENV = { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' };

// options: input (standard input), encoding, timeout (ms; a hang guard: the program is killed
// with SIGTERM then, and r.signal says so).
export function run(program, args, options = {}) {
  const r = spawnSync(program, args, {
    cwd: ROOT,
    encoding: options.encoding ?? 'utf8',
    input: options.input,
    maxBuffer: 64 << 20,
    env: ENV,
    timeout: options.timeout, // ms, a hang guard: the program is killed (SIGTERM) past it
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

// A program run with `input` on standard input, without blocking the event loop; its output as
// UTF-8 text.
export function runAsync(program, args, input) {
  return new Promise((resolve) => {
    const p = spawn(program, args, { cwd: ROOT, env: ENV });
    const out = [], err = [];
    p.stdout.on('data', (d) => out.push(d));
    p.stderr.on('data', (d) => err.push(d));
    p.stdin.on('error', () => {});
    p.on('close', (status, signal) => resolve({ status, signal, stdout: Buffer.concat(out).toString('utf8'),
      stderr: Buffer.concat(err).toString('utf8') }));
    p.stdin.end(input);
  });
}

// fn over items, `width` at a time; the results in order.
export async function inPool(items, width, fn) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const k = next++;
      results[k] = await fn(items[k], k);
    }
  }));
  return results;
}
