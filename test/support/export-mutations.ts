import { detectCompression } from '../../src/decompress/detect-compression.ts';

/**
 * Seeded mutations of an export file, for the fuzz test: the same bytes and seed give the same mutations, so a
 * failure reproduces from its fixture, seed and index. About half overwrite one field of the file's format with
 * a value chosen to hurt (0, all ones, the file's length and around it, 2^53 and 2^63 for 64-bit fields, ...);
 * the rest flip bits, overwrite or insert bytes, truncate, cut a range out or append bytes.
 */
export interface Mutation {
  /** What was done, for the report: `zip central[0].localHeaderOffset = 4294967295`, `truncate to 120`. */
  readonly kind: string;
  readonly bytes: Buffer;
}

/** A field of a record in the file: `width` bytes, little-endian unless `bigEndian` (bzip2 is bit-packed). */
interface Field {
  readonly name: string;
  readonly offset: number;
  readonly width: number;
  readonly bigEndian?: boolean;
}

/** A bit-aligned field (bzip2): `bits` bits starting at bit `bit`, most significant first. */
interface BitField {
  readonly name: string;
  readonly bit: number;
  readonly bits: number;
}

export function* exportMutations(original: Buffer, seed: number, count: number): Generator<Mutation> {
  const random = mulberry32(seed);
  const fields = formatFields(original);
  for (let n = 0; n < count; n++) {
    const structural = (fields.bytes.length > 0 || fields.bits.length > 0) && random() < 0.5;
    yield structural ? fieldMutation(original, fields, random) : byteMutation(original, random);
  }
}

/** A deterministic generator of floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const below = (random: () => number, bound: number): number => Math.floor(random() * bound);

function formatFields(bytes: Buffer): { bytes: Field[]; bits: BitField[] } {
  switch (detectCompression(bytes.subarray(0, 4))) {
    case 'zip':
      return { bytes: zipFields(bytes), bits: [] };
    case 'gzip':
      return { bytes: gzipFields(bytes), bits: [] };
    case 'bzip2':
      return bzip2Fields(bytes);
    case 'none':
      return { bytes: [], bits: [] };
  }
}

function* signatures(bytes: Buffer, signature: number): Generator<number> {
  const pattern = Buffer.alloc(4);
  pattern.writeUInt32LE(signature);
  for (let at = bytes.indexOf(pattern); at >= 0; at = bytes.indexOf(pattern, at + 1)) yield at;
}

/** Every record found by its signature (a false match inside compressed data is one more byte to hurt). */
function zipFields(bytes: Buffer): Field[] {
  const fields: Field[] = [];
  const add = (record: string, at: number, layout: Record<string, [number, number]>) => {
    for (const [name, [offset, width]] of Object.entries(layout)) {
      if (at + offset + width <= bytes.length) fields.push({ name: `${record}.${name}`, offset: at + offset, width });
    }
  };
  let n = 0;
  for (const at of signatures(bytes, 0x04034b50)) {
    add(`local[${n++}]`, at, {
      signature: [0, 4],
      flags: [6, 2],
      method: [8, 2],
      crc: [14, 4],
      compressedSize: [18, 4],
      size: [22, 4],
      nameLength: [26, 2],
      extraLength: [28, 2],
    });
  }
  n = 0;
  for (const at of signatures(bytes, 0x02014b50)) {
    const record = `central[${n++}]`;
    add(record, at, {
      signature: [0, 4],
      flags: [8, 2],
      method: [10, 2],
      crc: [16, 4],
      compressedSize: [20, 4],
      size: [24, 4],
      nameLength: [28, 2],
      extraLength: [30, 2],
      commentLength: [32, 2],
      disk: [34, 2],
      localHeaderOffset: [42, 4],
    });
    if (at + 46 > bytes.length) continue;
    // The zip64 extra field: its size, then up to three 64-bit values (sizes and local header offset).
    const extraStart = at + 46 + bytes.readUInt16LE(at + 28);
    const extraEnd = Math.min(bytes.length, extraStart + bytes.readUInt16LE(at + 30));
    for (let extra = extraStart; extra + 4 <= extraEnd; extra += 4 + bytes.readUInt16LE(extra + 2)) {
      if (bytes.readUInt16LE(extra) !== 0x0001) continue;
      add(`${record}.zip64`, extra, { size: [2, 2], first: [4, 8], second: [12, 8], third: [20, 8] });
    }
  }
  for (const at of signatures(bytes, 0x06054b50)) {
    add('end', at, {
      signature: [0, 4],
      disk: [4, 2],
      directoryDisk: [6, 2],
      entriesOnDisk: [8, 2],
      entries: [10, 2],
      directorySize: [12, 4],
      directoryOffset: [16, 4],
      commentLength: [20, 2],
    });
  }
  for (const at of signatures(bytes, 0x07064b50))
    add('zip64Locator', at, { signature: [0, 4], disk: [4, 4], recordOffset: [8, 8], disks: [16, 4] });
  for (const at of signatures(bytes, 0x06064b50)) {
    add('zip64Record', at, {
      signature: [0, 4],
      recordSize: [4, 8],
      disk: [16, 4],
      directoryDisk: [20, 4],
      entriesOnDisk: [24, 8],
      entries: [32, 8],
      directorySize: [40, 8],
      directoryOffset: [48, 8],
    });
  }
  return fields;
}

/** Each member's header (method, flags, FEXTRA length) and trailer (crc-32, ISIZE). */
function gzipFields(bytes: Buffer): Field[] {
  const starts: number[] = [];
  for (
    let at = bytes.indexOf(Buffer.from([0x1f, 0x8b, 0x08]));
    at >= 0;
    at = bytes.indexOf(Buffer.from([0x1f, 0x8b, 0x08]), at + 1)
  )
    starts.push(at);
  const fields: Field[] = [];
  starts.forEach((start, n) => {
    const end = starts[n + 1] ?? bytes.length;
    fields.push(
      { name: `member[${n}].method`, offset: start + 2, width: 1 },
      { name: `member[${n}].flags`, offset: start + 3, width: 1 },
      { name: `member[${n}].mtime`, offset: start + 4, width: 4 },
      // Read as FEXTRA's length once the flags say so; the mutation sets FEXTRA with it (see fieldMutation).
      { name: `member[${n}].extraLength`, offset: start + 10, width: 2 },
    );
    if (end - 8 > start + 10)
      fields.push(
        { name: `member[${n}].crc`, offset: end - 8, width: 4 },
        { name: `member[${n}].isize`, offset: end - 4, width: 4 },
      );
  });
  return fields.filter((field) => field.offset + field.width <= bytes.length);
}

const BLOCK_MAGIC = 0x314159265359n;
const END_MAGIC = 0x177245385090n;

/**
 * Each stream's block size digit and each block's and stream's bit-aligned records: the block magic, its crc,
 * the randomized bit and origPtr after it; the end-of-stream magic and the stream crc after it.
 */
function bzip2Fields(bytes: Buffer): { bytes: Field[]; bits: BitField[] } {
  const fields: Field[] = [];
  for (let at = bytes.indexOf('BZh'); at >= 0; at = bytes.indexOf('BZh', at + 1))
    fields.push({ name: `stream@${at}.blockSize`, offset: at + 3, width: 1 });
  const bits: BitField[] = [];
  for (let bit = 0; bit + 48 <= bytes.length * 8; bit++) {
    const value = readBits(bytes, bit, 48);
    if (value === BLOCK_MAGIC) {
      bits.push(
        { name: `block@${bit}.magic`, bit, bits: 48 },
        { name: `block@${bit}.crc`, bit: bit + 48, bits: 32 },
        { name: `block@${bit}.randomized`, bit: bit + 80, bits: 1 },
        { name: `block@${bit}.origPtr`, bit: bit + 81, bits: 24 },
      );
    } else if (value === END_MAGIC) {
      bits.push({ name: `end@${bit}.magic`, bit, bits: 48 }, { name: `end@${bit}.streamCrc`, bit: bit + 48, bits: 32 });
    }
  }
  return { bytes: fields, bits: bits.filter((field) => field.bit + field.bits <= bytes.length * 8) };
}

function readBits(bytes: Buffer, bit: number, count: number): bigint {
  let value = 0n;
  for (let n = 0; n < count; n++) value = (value << 1n) | BigInt((bytes[(bit + n) >> 3]! >> (7 - ((bit + n) & 7))) & 1);
  return value;
}

function writeBits(bytes: Buffer, bit: number, count: number, value: bigint): void {
  for (let n = 0; n < count; n++) {
    const set = (value >> BigInt(count - 1 - n)) & 1n;
    const index = (bit + n) >> 3;
    const mask = 1 << (7 - ((bit + n) & 7));
    bytes[index] = set ? bytes[index]! | mask : bytes[index]! & ~mask;
  }
}

/** Values that break size and offset arithmetic: edges of the field's width, the file's length and around it. */
function hurtfulValues(width: number, original: bigint, fileLength: number, random: () => number): bigint[] {
  const bits = BigInt(width * 8);
  const max = (1n << bits) - 1n;
  const length = BigInt(fileLength);
  const values = [
    0n,
    1n,
    max,
    max - 1n,
    1n << (bits - 1n),
    (1n << (bits - 1n)) - 1n,
    original + 1n,
    original - 1n,
    original * 2n,
    original + 46n,
    length,
    length - 1n,
    length + 1n,
    length * 2n,
    BigInt(Math.floor(random() * Number(max > 0xffffffffn ? 0xffffffffn : max))),
  ];
  if (width === 8) values.push(2n ** 53n - 1n, 2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 63n - 100n);
  return values.map((value) => ((value % (max + 1n)) + max + 1n) % (max + 1n));
}

function fieldMutation(original: Buffer, fields: { bytes: Field[]; bits: BitField[] }, random: () => number): Mutation {
  const bytes = Buffer.from(original);
  if (fields.bits.length > 0 && (fields.bytes.length === 0 || random() < 0.7)) {
    const field = pick(random, fields.bits);
    const current = readBits(bytes, field.bit, field.bits);
    const value =
      random() < 0.5
        ? current ^ (1n << BigInt(below(random, field.bits)))
        : BigInt(Math.floor(random() * 2 ** Math.min(field.bits, 32)));
    writeBits(bytes, field.bit, field.bits, value);
    return { kind: `bzip2 ${field.name} = ${value}`, bytes };
  }
  const field = pick(random, fields.bytes);
  const current = readField(bytes, field);
  let value = pick(random, hurtfulValues(field.width, current, bytes.length, random));
  if (field.name.endsWith('.blockSize')) value = BigInt(pick(random, [0x30, 0x31, 0x35, 0x39, 0x3a, 0x61, 0x00, 0xff]));
  if (field.name.endsWith('.flags') && field.width === 1) value = BigInt(below(random, 256));
  writeField(bytes, field, value);
  let kind = `${field.name} = ${value}`;
  if (field.name.endsWith('.extraLength') && field.name.startsWith('member')) {
    // FEXTRA's length only counts with the FEXTRA flag set.
    const flags = field.offset - 7;
    bytes[flags] = bytes[flags]! | 0x04;
    kind += ' with FEXTRA';
  }
  return { kind: `${detectCompression(original.subarray(0, 4))} ${kind}`, bytes };
}

function readField(bytes: Buffer, field: Field): bigint {
  let value = 0n;
  for (let n = field.width - 1; n >= 0; n--) value = (value << 8n) | BigInt(bytes[field.offset + n]!);
  return value;
}

function writeField(bytes: Buffer, field: Field, value: bigint): void {
  for (let n = 0; n < field.width; n++) bytes[field.offset + n] = Number((value >> BigInt(8 * n)) & 0xffn);
}

function byteMutation(original: Buffer, random: () => number): Mutation {
  const length = original.length;
  // Headers and trailers live at the ends: a third of the positions are taken there.
  const position = () => {
    const choice = random();
    if (choice < 1 / 6) return below(random, Math.min(length, 64));
    if (choice < 1 / 3) return Math.max(0, length - 1 - below(random, Math.min(length, 64)));
    return below(random, length);
  };
  const kind = length === 0 ? 3 : below(random, 6);
  if (kind === 0) {
    const cut = below(random, length);
    return { kind: `truncate to ${cut}`, bytes: original.subarray(0, cut) };
  }
  if (kind === 1) {
    const start = position();
    const end = Math.min(length, start + 1 + below(random, 64));
    return {
      kind: `delete ${start}..${end}`,
      bytes: Buffer.concat([original.subarray(0, start), original.subarray(end)]),
    };
  }
  if (kind === 2) {
    const at = position();
    const inserted = randomBytes(random, 1 + below(random, 32));
    return {
      kind: `insert ${inserted.length} bytes at ${at}`,
      bytes: Buffer.concat([original.subarray(0, at), inserted, original.subarray(at)]),
    };
  }
  if (kind === 3) {
    const appended =
      random() < 0.5
        ? randomBytes(random, 1 + below(random, 64))
        : Buffer.from(pick(random, ['B', 'BZ', 'BZh9', 'PK\x05\x06', '\x1f\x8b\x08\x00']));
    return { kind: `append ${appended.length} bytes`, bytes: Buffer.concat([original, appended]) };
  }
  const bytes = Buffer.from(original);
  const changes: string[] = [];
  for (let n = 1 + below(random, 4); n > 0; n--) {
    const at = position();
    if (kind === 4) {
      const bit = below(random, 8);
      bytes[at] = bytes[at]! ^ (1 << bit);
      changes.push(`${at}.${bit}`);
    } else {
      bytes[at] = pick(random, [0x00, 0xff, 0x0a, 0x0d, 0x22, 0x3b, 0x80, below(random, 256)]);
      changes.push(`${at}=${bytes[at]}`);
    }
  }
  return { kind: `${kind === 4 ? 'flip bits' : 'set bytes'} ${changes.join(' ')}`, bytes };
}

function randomBytes(random: () => number, count: number): Buffer {
  return Buffer.from(Array.from({ length: count }, () => below(random, 256)));
}
