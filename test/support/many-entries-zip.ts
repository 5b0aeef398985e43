import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';

const BATCH = 10_000;

/**
 * Writes a well-formed zip of `count` empty stored entries (`e0000001.csv`, ...) to `filePath`, a batch of entries at a
 * time, in zip64 form when the count does not fit the end record: the archive an attacker sends to make a reader
 * build a million entry objects. 400,000 entries take about 39 MB.
 */
export async function writeManyEntriesZip(filePath: string, count: number): Promise<void> {
  const name = (n: number) => Buffer.from(`e${String(n).padStart(7, '0')}.csv`);
  const nameLength = name(1).length;
  const localBytes = 30 + nameLength;
  const centralBytes = 46 + nameLength;

  function* records(): Generator<Buffer> {
    for (let first = 1; first <= count; first += BATCH) {
      const last = Math.min(count, first + BATCH - 1);
      const batch = Buffer.alloc((last - first + 1) * localBytes);
      for (let n = first; n <= last; n++) {
        const at = (n - first) * localBytes;
        batch.writeUInt32LE(0x04034b50, at);
        batch.writeUInt16LE(10, at + 4);
        batch.writeUInt16LE(nameLength, at + 26);
        name(n).copy(batch, at + 30);
      }
      yield batch;
    }
    for (let first = 1; first <= count; first += BATCH) {
      const last = Math.min(count, first + BATCH - 1);
      const batch = Buffer.alloc((last - first + 1) * centralBytes);
      for (let n = first; n <= last; n++) {
        const at = (n - first) * centralBytes;
        batch.writeUInt32LE(0x02014b50, at);
        batch.writeUInt16LE(0x031e, at + 4);
        batch.writeUInt16LE(10, at + 6);
        batch.writeUInt16LE(nameLength, at + 28);
        batch.writeUInt32LE((n - 1) * localBytes, at + 42);
        name(n).copy(batch, at + 46);
      }
      yield batch;
    }
    yield endRecords(count, count * centralBytes, count * localBytes);
  }
  await pipeline(records, createWriteStream(filePath));
}

function endRecords(count: number, directorySize: number, directoryOffset: number): Buffer {
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  if (count <= 0xfffe && directoryOffset < 0xffffffff) {
    end.writeUInt16LE(count, 8);
    end.writeUInt16LE(count, 10);
    end.writeUInt32LE(directorySize, 12);
    end.writeUInt32LE(directoryOffset, 16);
    return end;
  }
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(count), 24);
  record.writeBigUInt64LE(BigInt(count), 32);
  record.writeBigUInt64LE(BigInt(directorySize), 40);
  record.writeBigUInt64LE(BigInt(directoryOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(directoryOffset + directorySize), 8);
  locator.writeUInt32LE(1, 16);
  end.writeUInt16LE(0xffff, 8);
  end.writeUInt16LE(0xffff, 10);
  end.writeUInt32LE(directorySize < 0xffffffff ? directorySize : 0xffffffff, 12);
  end.writeUInt32LE(directoryOffset < 0xffffffff ? directoryOffset : 0xffffffff, 16);
  return Buffer.concat([record, locator, end]);
}
