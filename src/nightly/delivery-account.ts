import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/**
 * The account a delivered export belongs to whole: its request's, when the request asked one account alone
 * (SCOPE=CLIENT); null for a group's export (any account of the group) or a request from before accounts were kept.
 */
export async function deliverySoleAccount(db: Kysely<Schema>, deliveryId: string): Promise<string | null> {
  const row = await db
    .selectFrom('recon.deliveries as d')
    .innerJoin('recon.export_requests as r', 'r.request_id', 'd.request_id')
    .select(sql<string | null>`CASE WHEN r.scope = 'CLIENT' THEN r.identifier END`.as('identifier'))
    .where('d.delivery_id', '=', deliveryId)
    .executeTakeFirst();
  return row?.identifier ?? null;
}
