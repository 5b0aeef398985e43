import { createHash } from 'node:crypto';
import { Refusal } from './refusal.ts';

/** Pieces of about 1 MiB: few rows per file, and little memory on either side of the database. */
export const CHUNK_BYTES = 1024 * 1024;

export interface UploadDigest {
  readonly sha256: string;
  readonly bytes: number;
}

/**
 * Reads an upload to its end, hashing it and handing it to `write` in pieces of at least CHUNK_BYTES (the last
 * one shorter). The limit is enforced as bytes arrive, so a body over it is refused (413) as soon as it has said
 * so, without being stored or buffered. An upload with no bytes is refused (400) once it has ended.
 */
export async function consumeUpload(
  bytes: AsyncIterable<Buffer>,
  maxBytes: number,
  write?: (piece: Buffer) => Promise<void>,
): Promise<UploadDigest> {
  const hash = createHash('sha256');
  let total = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of bytes) {
    total += chunk.length;
    if (total > maxBytes) throw new Refusal(413, 'too_large', `body over RECON_MAX_FILE_BYTES (${maxBytes} bytes)`);
    hash.update(chunk);
    if (!write) continue;
    pending.push(chunk);
    pendingBytes += chunk.length;
    if (pendingBytes >= CHUNK_BYTES) {
      await write(Buffer.concat(pending, pendingBytes));
      pending = [];
      pendingBytes = 0;
    }
  }
  if (write && pendingBytes > 0) await write(Buffer.concat(pending, pendingBytes));
  if (total === 0) throw new Refusal(400, 'empty', 'empty body: the delivered file has no bytes');
  return { sha256: hash.digest('hex'), bytes: total };
}
