import type { Kysely } from 'kysely';
import type { ServiceAccount } from '../config/service-accounts.ts';
import type { Schema } from '../db/schema.ts';

/**
 * Makes recon.accounts the configured accounts (their IDENTIFIER, group and payment methods, never a secret), so
 * that reconciliation knows which methods each account serves and the views name each account's group. Called at
 * start by whatever reconciles with the accounts configured; nothing configured leaves the table as it is.
 */
export async function syncAccounts(
  db: Kysely<Schema>,
  accounts: readonly Pick<ServiceAccount, 'identifier' | 'group' | 'paymentMethods'>[],
): Promise<void> {
  if (accounts.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('recon.accounts')
      .where(
        'identifier',
        'not in',
        accounts.map((account) => account.identifier),
      )
      .execute();
    await trx
      .insertInto('recon.accounts')
      .values(
        accounts.map((account) => ({
          identifier: account.identifier,
          account_group: account.group ?? null,
          payment_methods: account.paymentMethods ? [...account.paymentMethods] : null,
        })),
      )
      .onConflict((oc) =>
        oc.column('identifier').doUpdateSet((eb) => ({
          account_group: eb.ref('excluded.account_group'),
          payment_methods: eb.ref('excluded.payment_methods'),
          synced_at: new Date(),
        })),
      )
      .execute();
  });
}
