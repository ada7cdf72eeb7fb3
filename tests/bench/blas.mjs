// blas.mjs — which kernel PyTorch's BLAS runs, and the environment the bench's PyTorch
// processes get so that it is the CPU's widest. Debian's OpenBLAS (0.3.21) picks its kernel from
// the CPU's model number; a CPU newer than it knows falls back to "Prescott", the SSE3 kernel,
// and PyTorch then runs a fraction of the speed the machine has (measured on a Xeon with
// AVX-512: the layer 7–9× slower than with SkylakeX). The bench asks OpenBLAS which core it
// runs (tests/bench/torch_env.py), reads the CPU's flags from /proc/cpuinfo, and when the core is
// narrower than the flags allow, names the widest in OPENBLAS_CORETYPE for the PyTorch processes
// only (avx512f: SkylakeX, avx2: Haswell; else OpenBLAS's own choice stands). A value the user
// set is kept. Every PyTorch figure is reported with the core and threads that ran it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../lib/run.mjs';

// OpenBLAS's x86 cores by the widest vectors their kernels use: 3 AVX-512, 2 AVX2, 1 AVX, 0 SSE.
const CORE_WIDTH = {
  skylakex: 3, cooperlake: 3, sapphirerapids: 3,
  haswell: 2, zen: 2, excavator: 2,
  sandybridge: 1, bulldozer: 1, piledriver: 1, steamroller: 1,
};
const coreWidth = (core) => CORE_WIDTH[String(core || '').toLowerCase()] ?? 0;

// The CPU's flags (x86 /proc/cpuinfo), [] when unknown.
export function cpuFlags() {
  try {
    return ((readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m) || [])[1] || '').trim().split(/\s+/);
  } catch {
    return [];
  }
}

// The OPENBLAS_CORETYPE to set, or null: the widest core the flags allow when the probed core is
// narrower than it.
export function chooseCoretype(flags, probedCore) {
  const widest = flags.includes('avx512f') ? ['SkylakeX', 3] : flags.includes('avx2') ? ['Haswell', 2] : null;
  return widest && coreWidth(probedCore) < widest[1] ? widest[0] : null;
}

// { info } from tests/bench/torch_env.py under env, or { note }.
function probe(env) {
  const r = spawnSync('/usr/bin/python3', [join(ROOT, 'tests', 'bench', 'torch_env.py')], { encoding: 'utf8', env });
  if (r.error || r.status !== 0) return { note: `PyTorch is not installed or did not start (${(r.stderr || String(r.error)).trim().split('\n').pop()})` };
  return { info: JSON.parse(r.stdout.trim().split('\n').pop()) };
}

// { env, blas } for the PyTorch processes: env is process.env with OPENBLAS_CORETYPE set when
// it must be; blas says what OpenBLAS chose alone, what was set and why, and what then runs.
export function torchEnv() {
  const env = { ...process.env };
  const flags = cpuFlags();
  const first = probe(env);
  if (first.note) return { env, blas: { note: first.note } };
  const blas = { chosen_by_openblas: first.info.core, ...first.info };
  if (process.env.OPENBLAS_CORETYPE) {
    blas.coretype = `OPENBLAS_CORETYPE=${process.env.OPENBLAS_CORETYPE}, as set in the environment`;
    return { env, blas };
  }
  const coretype = chooseCoretype(flags, first.info.core);
  if (!coretype) {
    blas.coretype = `not set: OpenBLAS chose ${first.info.core}, the widest this CPU's flags allow`;
    return { env, blas };
  }
  env.OPENBLAS_CORETYPE = coretype;
  const second = probe(env);
  if (second.note || second.info.core.toLowerCase() !== coretype.toLowerCase()) {
    delete env.OPENBLAS_CORETYPE;
    blas.coretype = `OpenBLAS chose ${first.info.core} on a CPU with ${coretype}'s instructions; OPENBLAS_CORETYPE=${coretype} did not take (${second.note || second.info.core}), so PyTorch runs ${first.info.core}`;
    return { env, blas };
  }
  Object.assign(blas, second.info, { coretype: `OPENBLAS_CORETYPE=${coretype}: OpenBLAS chose ${first.info.core} on its own, narrower than this CPU's ${flags.includes('avx512f') ? 'AVX-512' : 'AVX2'}` });
  return { env, blas };
}

// How a PyTorch figure is labelled: its kernel and threads.
export const blasLabel = (i) => (i && i.core ? `OpenBLAS ${i.core}, ${i.blas_threads} BLAS thread${i.blas_threads === 1 ? '' : 's'}, ${i.torch_threads} PyTorch thread${i.torch_threads === 1 ? '' : 's'}` : 'BLAS unknown');
