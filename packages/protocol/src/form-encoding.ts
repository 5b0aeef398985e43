import { invalidParameter, missingParameter } from './protocol-error.ts';

/** Fields of one cart item (`params[CART][X][FIELD]`), values as sent on the wire. */
export type CartItem = Readonly<Record<string, string>>;

/** Request parameters by name; the key `CART` holds the cart items, undefined values are not sent. */
export interface Params {
  readonly [name: string]: string | readonly CartItem[] | undefined;
}

export const CART = 'CART';
const ID_SEPARATOR = ';';

export function encodeRequest(method: string, params: Params): string {
  const form = new URLSearchParams();
  form.append('method', method);
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (typeof value === 'string') {
      form.append(`params[${name}]`, value);
      continue;
    }
    value.forEach((item, index) => {
      for (const [field, fieldValue] of Object.entries(item)) {
        form.append(`params[${name}][${index}][${field}]`, fieldValue);
      }
    });
  }
  return form.toString();
}

const SCALAR_KEY = /^params\[([^[\]]+)\]$/;
const NESTED_KEY = /^params\[([^[\]]+)\]\[(0|[1-9][0-9]{0,5})\]\[([^[\]]+)\]$/;

/**
 * Parses a process or export request body. Throws ProtocolError 1001/1002 for a missing `method`, a key
 * that is not `params[NAME]` or `params[NAME][X][FIELD]`, a repeated key, cart indexes that do not run
 * 0..n-1, or a `method` that differs from `params[OPERATIONTYPE]`.
 */
export function decodeRequest(body: string): { method: string; params: Params } {
  let method: string | undefined;
  const scalars = new Map<string, string>();
  const nested = new Map<string, Map<number, Record<string, string>>>();
  for (const [key, value] of new URLSearchParams(body)) {
    if (key === 'method') {
      if (method !== undefined) throw invalidParameter('method', 'given more than once');
      method = value;
      continue;
    }
    const scalar = SCALAR_KEY.exec(key);
    if (scalar) {
      const name = scalar[1]!;
      if (scalars.has(name) || nested.has(name)) throw invalidParameter(name, 'given more than once');
      scalars.set(name, value);
      continue;
    }
    const item = NESTED_KEY.exec(key);
    if (!item) throw invalidParameter(key, 'not a params[NAME] or params[NAME][X][FIELD] field');
    const [, name, index, field] = item as unknown as [string, string, string, string];
    if (scalars.has(name)) throw invalidParameter(name, 'given both as a value and as a list');
    const items = nested.get(name) ?? new Map<number, Record<string, string>>();
    nested.set(name, items);
    const fields = items.get(Number(index)) ?? {};
    items.set(Number(index), fields);
    if (Object.hasOwn(fields, field)) throw invalidParameter(`${name}[${index}][${field}]`, 'given more than once');
    fields[field] = value;
  }
  if (method === undefined) throw missingParameter('method');
  const params: Record<string, string | CartItem[]> = Object.fromEntries(scalars);
  for (const [name, items] of nested) params[name] = toList(name, items);
  const operationType = params['OPERATIONTYPE'];
  if (typeof operationType === 'string' && operationType !== method) {
    throw invalidParameter('OPERATIONTYPE', `"${operationType}" differs from method "${method}"`);
  }
  return { method, params };
}

function toList(name: string, items: Map<number, Record<string, string>>): CartItem[] {
  const list: CartItem[] = [];
  for (let index = 0; index < items.size; index++) {
    const item = items.get(index);
    if (!item) throw invalidParameter(`${name}[${index}]`, 'item indexes must run from 0 without gaps');
    list.push(item);
  }
  return list;
}

export function joinIds(ids: readonly string[]): string {
  return ids.join(ID_SEPARATOR);
}

export function splitIds(value: string): string[] {
  return value.split(ID_SEPARATOR);
}
