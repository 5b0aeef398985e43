import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { issueExportTokens, type ExportTokenRequest } from '../receive/export-token.ts';
import type { ExportUnit } from '../client/export-accounts.ts';

/** A nightly run's export request, with the account that signs it and its SCOPE. */
export interface AccountExportRequest extends ExportTokenRequest {
  readonly unit: ExportUnit;
}

/**
 * Records a run's requests under new tokens, each with its account and scope, in the caller's transaction: a
 * request is never seen (claimed, sent) before its account is on it.
 */
export async function issueAccountExportRequests(
  trx: Kysely<Schema>,
  requests: readonly AccountExportRequest[],
): Promise<void> {
  const issued = await issueExportTokens(trx, requests);
  const idsOf = new Map<string, { unit: ExportUnit; ids: string[] }>();
  requests.forEach((request, index) => {
    const key = `${request.unit.scope} ${request.unit.identifier}`;
    const entry = idsOf.get(key) ?? { unit: request.unit, ids: [] };
    entry.ids.push(issued[index]!.requestId);
    idsOf.set(key, entry);
  });
  for (const { unit, ids } of idsOf.values())
    await trx
      .updateTable('recon.export_requests')
      .set({ identifier: unit.identifier, scope: unit.scope })
      .where('request_id', '=', sql<string>`ANY (${ids}::bigint[])`)
      .execute();
}
