// safetensors.mjs — a minimal reader for the tests: parses a safetensors file's header and
// returns its float32 tensors as Float32Arrays with their shapes. Test-side only; the product
// reads safetensors in C (core/safetensors.c).
import { readFileSync } from 'node:fs';

export function readSafetensors(path) {
  const buf = readFileSync(path);
  const headerLen = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + headerLen).toString('utf8'));
  const dataStart = 8 + headerLen;
  const tensors = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (info.dtype !== 'F32') throw new Error(`${path}: ${name} is ${info.dtype}, expected F32`);
    const [begin, end] = info.data_offsets;
    const bytes = buf.subarray(dataStart + begin, dataStart + end);
    const copy = new Float32Array(new Uint8Array(bytes).buffer); // aligned copy
    tensors[name] = { shape: info.shape, data: copy };
  }
  return { metadata: header.__metadata__ || {}, tensors };
}

// Largest difference between two float arrays: absolute where |want| <= 1, relative above.
export function maxDiff(got, want) {
  let worst = 0, at = -1;
  for (let i = 0; i < want.length; i++) {
    const scale = Math.max(1, Math.abs(want[i]));
    const d = Math.abs(got[i] - want[i]) / scale;
    if (!(d <= worst)) { worst = d; at = i; }
  }
  return { worst, at };
}
