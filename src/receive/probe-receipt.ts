import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/** A probe arriving later than this after it was sent is no proof of anything: its prober has given up. */
const PROBE_VALID_MS = 5 * 60_000;

/**
 * Marks the probe of this token received, when there is one still awaited: the receiver's half of the callback
 * probe (src/nightly/callback-probe.ts). Asked only for tokens that are no export request, so deliveries pay nothing.
 */
export async function receiveProbe(db: Kysely<Schema>, token: string, now: Date): Promise<boolean> {
  const received = await db
    .updateTable('recon.callback_probes')
    .set({ received_at: now })
    .where('token', '=', token)
    .where('received_at', 'is', null)
    .where('sent_at', '>', new Date(now.getTime() - PROBE_VALID_MS))
    .returning('probe_id')
    .executeTakeFirst();
  return received !== undefined;
}
