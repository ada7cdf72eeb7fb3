// safetensors.mjs — a minimal reader for the tests: parses a safetensors file's header and
// returns its float32 tensors as Float32Arrays with their shapes (int64 ones, ids, as numbers). Test-side only; the product
// reads safetensors in C (core/io/safetensors.c).
import { readFileSync, writeFileSync } from 'node:fs';

export function readSafetensors(path) {
  return parseSafetensors(readFileSync(path), path);
}

// The same from the file's bytes (a Buffer or Uint8Array, e.g. what Core.forward returns);
// source names them in errors.
export function parseSafetensors(file, source = 'safetensors') {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  const headerLen = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + headerLen).toString('utf8'));
  const dataStart = 8 + headerLen;
  const tensors = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [begin, end] = info.data_offsets;
    const bytes = new Uint8Array(buf.subarray(dataStart + begin, dataStart + end)); // aligned copy
    let data;
    if (info.dtype === 'F32') data = new Float32Array(bytes.buffer);
    else if (info.dtype === 'I64') data = Float64Array.from(new BigInt64Array(bytes.buffer), Number); // ids, as numbers
    else throw new Error(`${source}: ${name} is ${info.dtype}, expected F32 or I64`);
    tensors[name] = { shape: info.shape, data };
  }
  return { metadata: header.__metadata__ || {}, tensors };
}

// Largest difference between two float arrays, relative to the tensor's magnitude: absolute
// while the tensor's largest |value| is <= 1, relative to that largest value above. (Per
// element relative error is meaningless where large terms cancel to a small output: float32
// rounding error scales with the terms, not with their sum.)
export function maxDiff(got, want) {
  let worst = 0, at = -1;
  let largest = 1;
  for (let i = 0; i < want.length; i++) largest = Math.max(largest, Math.abs(want[i]));
  for (let i = 0; i < want.length; i++) {
    const scale = largest;
    const d = Math.abs(got[i] - want[i]) / scale;
    if (!(d <= worst)) { worst = d; at = i; }
  }
  return { worst, at };
}

// Writes float32 tensors ({name: {shape, data}}) as a safetensors file, for tests that need
// well-formed files with wrong contents (bad shapes, NaN, wrong names).
export function writeSafetensors(path, tensors, metadata) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  const blobs = [];
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    const bytes = Buffer.from(new Float32Array(data).buffer);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes.length] };
    blobs.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  writeFileSync(path, Buffer.concat([len, Buffer.from(json), ...blobs]));
}
