import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { makeTempFolder } from '../temp/temp-folder.ts';
import { openStoredDelivery } from './open-stored-delivery.ts';

export interface SpooledDelivery {
  /** `delivery-<id>` in a folder of its own; recon.files names the file otherwise (nightly/delivery-file-name.ts). */
  readonly path: string;
  /** Deletes the file and its folder. */
  remove(): Promise<void>;
}

/**
 * A stored delivery written to a local file, for the ingest pipeline, which reads paths (a zip needs random
 * access). Nothing is left behind when writing fails.
 */
export async function spoolDelivery(
  db: Kysely<Schema>,
  deliveryId: string,
  directory?: string,
): Promise<SpooledDelivery> {
  const stored = await openStoredDelivery(db, deliveryId);
  const folder = await makeTempFolder('delivery', directory);
  const remove = folder.remove;
  const file = path.join(folder.path, `delivery-${deliveryId}`);
  try {
    await pipeline(stored.content, createWriteStream(file, { flags: 'wx' }));
  } catch (error) {
    await remove();
    throw error;
  }
  return { path: file, remove };
}
