import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { requestScope, type RequestScope } from '../normalize/row-scope.ts';

/** What a delivered export may write, from the export request whose token it came on. */
export interface DeliveryScope {
  readonly scope: RequestScope;
  /**
   * The account of the rows that name none: the request's, when it asked one account alone (SCOPE=CLIENT); null
   * for a group's export (such rows are rejected) or a request from before accounts were kept.
   */
  readonly soleAccount: string | null;
}

/**
 * The request's account (SCOPE=CLIENT), or the accounts of its group as recon.accounts has them (SCOPE=CLIENTSGROUP;
 * the group of the account that signed it), and its ORDERIDs. A request from before accounts were recorded asked for
 * the merchant's account, whichever it was: any account recon.accounts holds, or any at all when it holds none.
 */
export async function deliveryScope(db: Kysely<Schema>, deliveryId: string): Promise<DeliveryScope> {
  const request = await db
    .selectFrom('recon.deliveries as d')
    .innerJoin('recon.export_requests as r', 'r.request_id', 'd.request_id')
    .select((eb) => [
      'r.identifier',
      'r.scope',
      'r.order_ids',
      eb
        .selectFrom('recon.accounts as a')
        .innerJoin('recon.accounts as signer', 'signer.account_group', 'a.account_group')
        .whereRef('signer.identifier', '=', 'r.identifier')
        .select(sql<string[] | null>`array_agg(a.identifier)`.as('accounts'))
        .as('group_accounts'),
      eb
        .selectFrom('recon.accounts as a')
        .select(sql<string[] | null>`array_agg(a.identifier)`.as('accounts'))
        .as('all_accounts'),
    ])
    .where('d.delivery_id', '=', deliveryId)
    .executeTakeFirstOrThrow();
  const { identifier, order_ids: orderIds } = request;
  if (identifier === null) {
    const accounts = request.all_accounts ?? undefined;
    return { scope: requestScope({ accounts, scope: 'CLIENT', orderIds }), soleAccount: null };
  }
  if (request.scope === 'CLIENTSGROUP') {
    const accounts = [...new Set([identifier, ...(request.group_accounts ?? [])])];
    return { scope: requestScope({ accounts, scope: 'CLIENTSGROUP', orderIds }), soleAccount: null };
  }
  return { scope: requestScope({ accounts: [identifier], scope: 'CLIENT', orderIds }), soleAccount: identifier };
}
