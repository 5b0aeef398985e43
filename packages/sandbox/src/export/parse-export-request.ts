import {
  canonicalExportColumn,
  canonicalValue,
  EXPORT_COLUMNS,
  FIELD_DICTIONARY,
  invalidParameter,
  splitColumns,
  splitIds,
  validateRequest,
  type Compression,
  type Params,
} from '@recon/protocol';
import { authenticateRequest } from '../authenticate-request.ts';
import type { ExportScope, SandboxAccount, SandboxAccounts } from '../sandbox-accounts.ts';

export type ExportDelivery =
  | { readonly kind: 'response' }
  | { readonly kind: 'callback'; readonly url: string; readonly compression: Compression | undefined }
  | { readonly kind: 'mail'; readonly to: string; readonly compression: Compression | undefined };

/** A getTransactions request the sandbox can serve. */
export interface ExportRequest {
  /** The account that asked (its IDENTIFIER and HASH). */
  readonly account: SandboxAccount;
  /** CLIENT (default): the account's transactions; CLIENTSGROUP: those of every account of its group. */
  readonly scope: ExportScope;
  readonly orderIds: readonly string[];
  readonly transactionIds: readonly string[];
  /** Each known column under its documented name, any other as asked (answered empty). */
  readonly columns: readonly string[];
  readonly timeZone: string;
  readonly delivery: ExportDelivery;
}

const DEFAULT_TIME_ZONE = 'UTC';

/**
 * Checks a getTransactions request the way the process endpoint checks its own: the envelope
 * (authenticateRequest), then the field dictionary through validateRequest. Throws ProtocolError (1001
 * missing, 1002 invalid naming the field and why, 1003 HASH, 1004 VERSION) or ProcessRefusal (3001 account).
 */
export function parseExportRequest(params: Params, accounts: SandboxAccounts): ExportRequest {
  const account = authenticateRequest(accounts, params);
  validateRequest('getTransactions', undefined, params);
  const columns = columnList(params['COLUMNS']);
  const compression = compressionOf(params['COMPRESSION']);
  const callbackUrl = params['CALLBACKURL'] as string | undefined;
  const mailTo = params['MAILTO'] as string | undefined;
  return {
    account,
    scope: scopeOf(params['SCOPE']),
    orderIds: idList(params['ORDERID']),
    transactionIds: idList(params['TRANSACTIONID']),
    columns,
    timeZone: (params['TIMEZONE'] as string | undefined) ?? DEFAULT_TIME_ZONE,
    // TIMEZONE is taken in any case by Intl, which knows `europe/paris` as Europe/Paris.
    delivery:
      callbackUrl !== undefined
        ? { kind: 'callback', url: callbackUrl, compression }
        : mailTo !== undefined
          ? { kind: 'mail', to: mailTo, compression }
          : { kind: 'response' },
  };
}

/** SCOPE (validated already) as the dictionary lists it, `client` → `CLIENT`; CLIENT when absent. */
function scopeOf(value: Params[string]): ExportScope {
  if (typeof value !== 'string') return 'CLIENT';
  return canonicalValue(FIELD_DICTIONARY.SCOPE, value) as ExportScope;
}

/** COMPRESSION (validated already) as the dictionary lists it: `GZIP`, `Gzip` → `gzip`. */
function compressionOf(value: Params[string]): Compression | undefined {
  if (typeof value !== 'string') return undefined;
  return canonicalValue(FIELD_DICTIONARY.COMPRESSION, value) as Compression;
}

/**
 * COLUMNS (validated already: no empty name) in the order asked, each known one named in any letter case and answered
 * under its documented name (`amount` is AMOUNT), any other under the name asked; the documented record, in the
 * default order, when absent. A column named twice is refused: the answer's rows could not hold it twice.
 */
function columnList(value: Params[string]): string[] {
  if (typeof value !== 'string') return [...EXPORT_COLUMNS];
  const columns: string[] = [];
  for (const name of splitColumns(value)) {
    const column = canonicalExportColumn(name) ?? name;
    if (columns.includes(column)) throw invalidParameter('COLUMNS', `column ${JSON.stringify(column)} is named twice`);
    columns.push(column);
  }
  return columns;
}

function idList(value: Params[string]): string[] {
  return typeof value === 'string' ? splitIds(value) : [];
}
