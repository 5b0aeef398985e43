import type { Kysely } from 'kysely';
import type { ServiceAccount } from '../config/service-accounts.ts';
import type { Schema } from '../db/schema.ts';

type AccountFacts = Pick<ServiceAccount, 'identifier' | 'group' | 'paymentMethods'>;

/**
 * Makes recon.accounts the configured accounts (their IDENTIFIER, group and payment methods, never a secret), so
 * that reconciliation knows which methods each account serves and the views name each account's group. Called at
 * start by whatever reconciles with the accounts configured; nothing configured leaves the table as it is. The
 * same list again changes nothing; another list replaces the whole table, every row's changed_at now.
 */
export async function syncAccounts(db: Kysely<Schema>, accounts: readonly AccountFacts[]): Promise<void> {
  if (accounts.length === 0) return;
  const wanted = accounts.map((account) => ({
    identifier: account.identifier,
    account_group: account.group ?? null,
    payment_methods: account.paymentMethods ? [...account.paymentMethods].sort() : null,
  }));
  await db.transaction().execute(async (trx) => {
    const held = await trx
      .selectFrom('recon.accounts')
      .select(['identifier', 'account_group', 'payment_methods'])
      .orderBy('identifier')
      .forUpdate()
      .execute();
    const byIdentifier = (a: { identifier: string }, b: { identifier: string }) =>
      a.identifier < b.identifier ? -1 : a.identifier > b.identifier ? 1 : 0;
    if (JSON.stringify(held) === JSON.stringify([...wanted].sort(byIdentifier))) return;
    await trx.deleteFrom('recon.accounts').execute();
    await trx.insertInto('recon.accounts').values(wanted).execute();
  });
}
