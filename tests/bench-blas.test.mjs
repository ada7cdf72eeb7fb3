// bench-blas.test.mjs — the bench's choice of OpenBLAS kernel for PyTorch (tests/bench/blas.mjs):
// the CPU's widest when OpenBLAS's own choice is narrower, else OpenBLAS's. A pure function of
// the CPU's flags and the core OpenBLAS reports; nothing here sets OPENBLAS_CORETYPE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseCoretype } from './bench/blas.mjs';

const AVX512 = ['sse2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512bw'];
const AVX2 = ['sse2', 'avx', 'avx2', 'fma'];

test('a CPU OpenBLAS does not know: the fallback Prescott is replaced by the widest kernel the flags allow', () => {
  assert.equal(chooseCoretype(AVX512, 'Prescott'), 'SkylakeX');
  assert.equal(chooseCoretype(AVX2, 'Prescott'), 'Haswell');
  assert.equal(chooseCoretype(AVX512, 'Haswell'), 'SkylakeX');
  assert.equal(chooseCoretype(AVX512, 'Sandybridge'), 'SkylakeX');
  assert.equal(chooseCoretype(AVX2, 'Nehalem'), 'Haswell');
});

test('OpenBLAS\'s own choice stands when it is already as wide as the CPU, or the CPU has no AVX2', () => {
  for (const core of ['SkylakeX', 'CooperLake', 'SapphireRapids']) assert.equal(chooseCoretype(AVX512, core), null);
  for (const core of ['Haswell', 'Zen']) assert.equal(chooseCoretype(AVX2, core), null);
  assert.equal(chooseCoretype(['sse2', 'sse3', 'avx'], 'Prescott'), null);
  assert.equal(chooseCoretype([], 'Prescott'), null);
});
