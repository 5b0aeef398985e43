import { joinColumns, joinIds, type CartItem, type Params } from '@recon/protocol';
import type { AsyncExportRequest, CartItemInput, SyncExportRequest } from './request-types.ts';

type Field = string | bigint | readonly CartItemInput[] | undefined;

/** Typed request → wire params: bigint amounts in digits, cart items as they are, undefined fields left out. */
export function toParams(request: object): Params {
  const params: Record<string, string | readonly CartItem[]> = {};
  for (const [name, value] of Object.entries(request as Record<string, Field>)) {
    if (value === undefined) continue;
    if (typeof value === 'bigint') params[name] = value.toString();
    else if (typeof value === 'string') params[name] = value;
    else params[name] = value.map(withoutUndefined);
  }
  return params;
}

/** getTransactions: several ids and columns travel as one `;`-joined value. */
export function exportParams(request: SyncExportRequest | AsyncExportRequest): Params {
  const { ORDERID, TRANSACTIONID, COLUMNS, ...rest } = request;
  return toParams({
    ...rest,
    ORDERID: ORDERID && joinIds(ORDERID),
    TRANSACTIONID: TRANSACTIONID && joinIds(TRANSACTIONID),
    COLUMNS: COLUMNS && joinColumns(COLUMNS),
  });
}

function withoutUndefined(item: CartItemInput): CartItem {
  return Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined));
}
