import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/**
 * The account of the transactions a delivered file loaded without saying theirs (no IDENTIFIER column, or an empty
 * one): when the request asked one account alone (SCOPE=CLIENT), they are that account's. A group's export
 * (SCOPE=CLIENTSGROUP) may hold any account of the group: its transactions keep no account rather than a guess.
 * Runs in the file's own transaction, over the rows the file wrote (a nightly batch's few hundred).
 */
export async function keepRequestAccount(db: Kysely<Schema>, deliveryId: string, fileId: string): Promise<void> {
  await sql`UPDATE recon.transactions t SET identifier = r.identifier
    FROM recon.deliveries d JOIN recon.export_requests r ON r.request_id = d.request_id
    WHERE d.delivery_id = ${deliveryId}::bigint AND r.scope = 'CLIENT' AND r.identifier IS NOT NULL
      AND t.file_id = ${fileId}::bigint AND t.identifier IS NULL`.execute(db);
}
