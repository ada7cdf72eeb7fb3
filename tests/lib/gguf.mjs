// gguf.mjs — a small GGUF reader for the tests (version 3, as ggml's gguf.h lays it out): the
// header, every metadata entry of any of the 13 value types (arrays of them too), the tensor
// infos, the alignment and where the data starts, each tensor's data as a Float32Array (F32 and
// F16). Written from the format, independent of the C writer; every structural rule it relies on
// is checked and a break is thrown as an Error naming it: magic, version, lengths inside the
// file, UTF-8 strings, a key given twice, dimensions, offsets aligned and inside the data.
import { readFileSync } from 'node:fs';

export const GGUF_TYPES = ['UINT8', 'INT8', 'UINT16', 'INT16', 'UINT32', 'INT32', 'FLOAT32', 'BOOL', 'STRING', 'ARRAY', 'UINT64', 'INT64', 'FLOAT64'];
const GGML_TYPES = { 0: { name: 'F32', size: 4 }, 1: { name: 'F16', size: 2 } };

export function readGguf(path) {
  return parseGguf(readFileSync(path), path);
}

// IEEE binary16 bits to a number.
export function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

export function parseGguf(file, source = 'gguf') {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  let at = 0;
  const fail = (what) => { throw new Error(`${source}: ${what} (at byte ${at})`); };
  const need = (n) => { if (at + n > buf.length) fail(`${n} bytes needed, the file ends`); };
  const u32 = () => { need(4); const v = buf.readUInt32LE(at); at += 4; return v; };
  const u64 = () => { need(8); const v = buf.readBigUInt64LE(at); at += 8; if (v > BigInt(Number.MAX_SAFE_INTEGER)) fail(`count ${v} too large`); return Number(v); };
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const str = () => {
    const n = u64();
    need(n);
    let s;
    try { s = utf8.decode(buf.subarray(at, at + n)); } catch { fail('a string is not UTF-8'); }
    at += n;
    return s;
  };
  const scalar = (type) => {
    switch (GGUF_TYPES[type]) {
      case 'UINT8': need(1); return buf.readUInt8(at++);
      case 'INT8': need(1); return buf.readInt8(at++);
      case 'UINT16': need(2); at += 2; return buf.readUInt16LE(at - 2);
      case 'INT16': need(2); at += 2; return buf.readInt16LE(at - 2);
      case 'UINT32': return u32();
      case 'INT32': need(4); at += 4; return buf.readInt32LE(at - 4);
      case 'FLOAT32': need(4); at += 4; return buf.readFloatLE(at - 4);
      case 'BOOL': { need(1); const b = buf.readUInt8(at++); if (b > 1) fail(`a bool is ${b}`); return b === 1; }
      case 'STRING': return str();
      case 'UINT64': need(8); at += 8; return buf.readBigUInt64LE(at - 8);
      case 'INT64': need(8); at += 8; return buf.readBigInt64LE(at - 8);
      case 'FLOAT64': need(8); at += 8; return buf.readDoubleLE(at - 8);
      default: return fail(`value type ${type} is not one of GGUF's`);
    }
  };

  need(4);
  if (buf.toString('latin1', 0, 4) !== 'GGUF') fail('the magic is not "GGUF"');
  at = 4;
  const version = u32();
  if (version !== 3) fail(`version ${version}, not 3`);
  const nTensors = u64(), nKv = u64();
  const kv = new Map();
  for (let i = 0; i < nKv; i++) {
    const key = str();
    if (kv.has(key)) fail(`key "${key}" twice`);
    const type = u32();
    let value;
    let elemType = null;
    if (GGUF_TYPES[type] === 'ARRAY') {
      elemType = u32();
      if (GGUF_TYPES[elemType] === 'ARRAY' || GGUF_TYPES[elemType] === undefined) fail(`array "${key}" of type ${elemType}`);
      const n = u64();
      value = new Array(n);
      for (let k = 0; k < n; k++) value[k] = scalar(elemType);
    } else {
      value = scalar(type);
    }
    kv.set(key, { type: GGUF_TYPES[type], elemType: elemType === null ? null : GGUF_TYPES[elemType], value });
  }
  const alignEntry = kv.get('general.alignment');
  if (alignEntry && alignEntry.type !== 'UINT32') fail('general.alignment is not UINT32');
  const alignment = alignEntry ? alignEntry.value : 32;
  if (!(alignment > 0 && (alignment & (alignment - 1)) === 0)) fail(`alignment ${alignment} is not a power of two`);
  const tensors = [];
  const names = new Set();
  for (let i = 0; i < nTensors; i++) {
    const name = str();
    if (names.has(name)) fail(`tensor "${name}" twice`);
    names.add(name);
    const nDims = u32();
    if (nDims < 1 || nDims > 4) fail(`tensor "${name}" has ${nDims} dimensions`);
    const ne = [];
    for (let d = 0; d < nDims; d++) ne.push(u64());
    const type = u32();
    if (!GGML_TYPES[type]) fail(`tensor "${name}" has ggml type ${type} (this reader knows F32 and F16)`);
    const offset = u64();
    if (offset % alignment) fail(`tensor "${name}" starts at ${offset}, not a multiple of ${alignment}`);
    const numel = ne.reduce((a, b) => a * b, 1);
    tensors.push({ name, ne, shape: [...ne].reverse(), type: GGML_TYPES[type].name, offset, numel, nbytes: numel * GGML_TYPES[type].size });
  }
  const dataStart = Math.ceil(at / alignment) * alignment;
  for (let p = at; p < dataStart && p < buf.length; p++) if (buf[p] !== 0) fail(`padding byte ${p} is not 0`);
  // The data: each tensor inside, none overlapping, each padded to the alignment (llama.cpp reads
  // the sum of the padded sizes).
  const sorted = [...tensors].sort((a, b) => a.offset - b.offset);
  let end = 0;
  for (const t of sorted) {
    if (t.offset < end) fail(`tensor "${t.name}" overlaps the one before`);
    end = t.offset + Math.ceil(t.nbytes / alignment) * alignment;
  }
  if (dataStart + end > buf.length) fail(`the data needs ${dataStart + end} bytes, the file has ${buf.length}`);
  for (const t of tensors) {
    const bytes = new Uint8Array(buf.subarray(dataStart + t.offset, dataStart + t.offset + t.nbytes)); // aligned copy
    t.bytes = bytes;
    t.data = t.type === 'F32' ? new Float32Array(bytes.buffer) : Float32Array.from(new Uint16Array(bytes.buffer), halfToFloat);
  }
  const get = (key) => (kv.has(key) ? kv.get(key).value : undefined);
  return { version, kv, get, tensors, tensor: (n) => tensors.find((t) => t.name === n), alignment, dataStart, size: buf.length, dataEnd: dataStart + end };
}
