import { verifyHash } from '@recon/protocol';
import type { NotificationInvalidReason } from '../db/schema.ts';

/** An account as a notification is checked against: its IDENTIFIER and the secret that signs for it. */
export interface SigningAccount {
  readonly identifier: string;
  readonly secret: string;
}

/**
 * Whether a notification is the service's: its IDENTIFIER must name one of the merchant's accounts, and its HASH
 * verify with that account's secret. Null when it does; otherwise why not. A secret never leaves this function.
 */
export function checkNotificationHash(
  accounts: readonly SigningAccount[],
  fields: Readonly<Record<string, string>>,
): NotificationInvalidReason | null {
  const identifier = fields['IDENTIFIER'];
  if (identifier === undefined || identifier === '') return 'missing_identifier';
  const account = accounts.find((candidate) => candidate.identifier === identifier);
  if (!account) return 'unknown_identifier';
  // Checked on the fields as sent: the HASH was computed over them, NUL bytes included.
  return verifyHash(account.secret, fields) ? null : 'hash_mismatch';
}
