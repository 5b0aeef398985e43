import type { HeaderPlan } from './header-plan.ts';
import { exportColumnOf } from './export-columns.ts';

/**
 * What a file may write. A token, or a backfill's request, asked the service for some accounts' transactions of
 * some ORDERIDs: a row of another account or ORDERID is not the answer to it, whoever sent it, and writing it would
 * let one account's export change another's money. `recon ingest` asks nothing: once accounts are configured, it
 * takes the rows of those accounts.
 */
export type RowScope = RequestScope | ConfiguredScope;

/** A delivery's or a backfill's request: the accounts it asked (one, or a group's) and the ORDERIDs it named. */
export interface RequestScope {
  readonly kind: 'request';
  /** Undefined: any account (a request from before accounts were recorded, with none configured since). */
  readonly accounts: ReadonlySet<string> | undefined;
  /**
   * Whether a row without an IDENTIFIER value is rejected: in a group's export it could be any account's. One
   * account's export (SCOPE=CLIENT) gives such a row the request's account.
   */
  readonly rowsNameTheirAccount: boolean;
  readonly orderIds: ReadonlySet<string>;
}

/** `recon ingest` with accounts configured: a row naming another account is rejected; any ORDERID is taken. */
export interface ConfiguredScope {
  readonly kind: 'configured';
  readonly accounts: ReadonlySet<string>;
}

export const ACCOUNT_NOT_ASKED = 'account not asked by this request';
export const ORDERID_NOT_ASKED = 'ORDERID not asked by this request';
export const ACCOUNT_NOT_CONFIGURED = 'account not configured';

/** A request's scope: SCOPE=CLIENT asks `identifier` alone, SCOPE=CLIENTSGROUP the accounts of its group. */
export function requestScope(request: {
  readonly accounts: readonly string[] | undefined;
  readonly scope: 'CLIENT' | 'CLIENTSGROUP';
  readonly orderIds: readonly string[];
}): RequestScope {
  return {
    kind: 'request',
    accounts: request.accounts && new Set(request.accounts),
    rowsNameTheirAccount: request.scope === 'CLIENTSGROUP',
    orderIds: new Set(request.orderIds),
  };
}

/** `recon ingest`'s scope: none when no account is configured, and every row is taken as before accounts. */
export function configuredScope(identifiers: readonly string[]): ConfiguredScope | undefined {
  return identifiers.length === 0 ? undefined : { kind: 'configured', accounts: new Set(identifiers) };
}

/** Why a row of an account outside the scope is rejected. */
function accountReason(scope: RowScope): string {
  return scope.kind === 'request' ? ACCOUNT_NOT_ASKED : ACCOUNT_NOT_CONFIGURED;
}

/** The accounts whose stored transactions a file may change: a request's; undefined when any (`recon ingest`). */
export function guardedAccounts(scope: RowScope | undefined): readonly string[] | undefined {
  return scope?.kind === 'request' && scope.accounts ? [...scope.accounts] : undefined;
}

/**
 * The check of one record's raw values under `header`: the reason the record is outside the scope, or undefined.
 * It reads IDENTIFIER and ORDERID as the normalizer keeps them (as written, the empty string as none), so that it
 * gives the same answer on the raw values (changed-rows-first.ts, which does not normalize) as on the row.
 * Undefined when the scope lets every record through.
 */
export function createScopeCheck(
  scope: RowScope | undefined,
  header: HeaderPlan,
): ((values: readonly string[]) => string | undefined) | undefined {
  if (scope === undefined) return undefined;
  const columns = header.header.map(exportColumnOf);
  const identifier = columns.indexOf('IDENTIFIER');
  const orderId = columns.indexOf('ORDERID');
  const accounts = scope.accounts;
  const otherAccount = accountReason(scope);
  const needsAccount = scope.kind === 'request' && scope.rowsNameTheirAccount;
  const orderIds = scope.kind === 'request' ? scope.orderIds : undefined;
  return (values) => {
    const account = identifier < 0 ? '' : (values[identifier] ?? '');
    if (account === '' ? needsAccount : accounts !== undefined && !accounts.has(account)) return otherAccount;
    if (orderIds !== undefined && !orderIds.has(orderId < 0 ? '' : (values[orderId] ?? ''))) return ORDERID_NOT_ASKED;
    return undefined;
  };
}
