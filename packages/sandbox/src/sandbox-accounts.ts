import type { PaymentMethod } from '@recon/protocol';

/** One merchant account the sandbox serves: its IDENTIFIER, the secret that signs for it, its group and methods. */
export interface SandboxAccount {
  readonly identifier: string;
  /** The HASH key of the account's requests and of the notifications sent for its transactions. */
  readonly secret: string;
  /** Accounts of one group are exported together by a request with SCOPE=CLIENTSGROUP. */
  readonly group?: string;
  /** The payment methods the account is enabled for; absent: both. */
  readonly paymentMethods?: readonly PaymentMethod[];
}

export type ExportScope = 'CLIENT' | 'CLIENTSGROUP';

export interface SandboxAccounts {
  /** Every account, in the order given. */
  readonly list: readonly SandboxAccount[];
  find(identifier: string): SandboxAccount | undefined;
  /** The IDENTIFIERs whose transactions an export by `requester` holds: its own, or its group's with CLIENTSGROUP. */
  exportedBy(requester: SandboxAccount, scope: ExportScope): ReadonlySet<string>;
  /** The first account enabled for `method`, where the seeded scenario places an order paid with it. */
  forMethod(method: PaymentMethod): SandboxAccount | undefined;
}

const MAX_IDENTIFIER_LENGTH = 32;

/** Checks the list (at least one account, IDENTIFIERs string(1-32) and distinct, secrets non-empty); never quotes a secret. */
export function createSandboxAccounts(accounts: readonly SandboxAccount[]): SandboxAccounts {
  if (accounts.length === 0) throw new RangeError('the sandbox serves at least one account');
  const byIdentifier = new Map<string, SandboxAccount>();
  for (const [index, account] of accounts.entries()) {
    const { identifier } = account;
    if (identifier.length === 0 || identifier.length > MAX_IDENTIFIER_LENGTH) {
      throw new RangeError(`account ${index + 1}: IDENTIFIER is string(1-32), got ${identifier.length} characters`);
    }
    if (account.secret.length === 0) throw new RangeError(`account ${index + 1} (${identifier}): the secret is empty`);
    if (account.group !== undefined && account.group.length === 0) {
      throw new RangeError(`account ${index + 1} (${identifier}): the group is empty`);
    }
    if (account.paymentMethods !== undefined && account.paymentMethods.length === 0) {
      throw new RangeError(`account ${index + 1} (${identifier}): paymentMethods is empty (omit it for both methods)`);
    }
    if (byIdentifier.has(identifier)) throw new RangeError(`IDENTIFIER ${identifier} is listed twice`);
    byIdentifier.set(identifier, Object.freeze({ ...account }));
  }
  const list = Object.freeze([...byIdentifier.values()]);
  return {
    list,
    find: (identifier) => byIdentifier.get(identifier),
    exportedBy(requester, scope) {
      if (scope === 'CLIENT' || requester.group === undefined) return new Set([requester.identifier]);
      return new Set(list.filter((account) => account.group === requester.group).map((account) => account.identifier));
    },
    forMethod: (method) => list.find((account) => servesMethod(account, method)),
  };
}

export function servesMethod(account: SandboxAccount, method: PaymentMethod): boolean {
  return account.paymentMethods === undefined || account.paymentMethods.includes(method);
}
