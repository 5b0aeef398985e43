import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ExportCompression, ExportScope, Schema } from '../db/schema.ts';
import { callbackEndpoint } from './callback-url.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 248 = 4 x 62: bytes from 248 up are skipped, so that every character is equally likely. */
const UNBIASED_LIMIT = 248;

/** `length` base62 characters from the system's cryptographic random source. */
export function generateToken(length: number): string {
  let token = '';
  while (token.length < length) {
    for (const byte of randomBytes(length)) {
      if (byte < UNBIASED_LIMIT && token.length < length) token += BASE62[byte % 62];
    }
  }
  return token;
}

/** What a token looks like (recon.export_requests checks the same); a path that does not is no token. */
export const TOKEN_PATTERN = /^[0-9A-Za-z]{8,}$/;

export interface ExportTokenRequest {
  /** RECON_CALLBACK_BASE_URL. */
  readonly callbackBaseUrl: string;
  readonly orderIds: readonly string[];
  readonly compression: ExportCompression;
  readonly nightlyRunId: string | null;
  /** A first delivery after this instant is refused with 404. */
  readonly expiresAt: Date;
  /** 1 for the first request of these orders, 2 for its first retry... */
  readonly attempt?: number;
  /** The nightly run's batch of ORDERIDs the request asks for. */
  readonly batch?: number;
  /** The account that signs the request, and the SCOPE it asks (a nightly run's requests record both). */
  readonly identifier?: string;
  readonly scope?: ExportScope;
}

export interface IssuedExportToken {
  readonly requestId: string;
  readonly token: string;
  /** The CALLBACKURL to send with the getTransactions request, at most 32 characters. */
  readonly callbackUrl: string;
}

/**
 * Records an export request (state 'requested') under a new single-use token and returns its CALLBACKURL.
 * Call it before sending the request, so that a delivery never arrives for a token the receiver does not know.
 */
export async function issueExportToken(db: Kysely<Schema>, request: ExportTokenRequest): Promise<IssuedExportToken> {
  const [issued] = await issueExportTokens(db, [request]);
  return issued!;
}

/** Several requests at once, in one statement (a nightly run's batches), in the order given. */
export async function issueExportTokens(
  db: Kysely<Schema>,
  requests: readonly ExportTokenRequest[],
): Promise<IssuedExportToken[]> {
  if (requests.length === 0) return [];
  const issued = requests.map((request) => {
    const endpoint = callbackEndpoint(request.callbackBaseUrl);
    const token = generateToken(endpoint.tokenLength);
    return { token, callbackUrl: endpoint.base + token };
  });
  const rows = await db
    .insertInto('recon.export_requests')
    .values(
      requests.map((request, index) => ({
        token: issued[index]!.token,
        nightly_run_id: request.nightlyRunId,
        order_ids: [...request.orderIds],
        compression: request.compression,
        attempt: request.attempt ?? 1,
        batch: request.batch ?? null,
        expires_at: request.expiresAt,
        identifier: request.identifier ?? null,
        scope: request.scope ?? null,
      })),
    )
    .returning(['request_id', 'token'])
    .execute();
  const idOf = new Map(rows.map((row) => [row.token, String(row.request_id)]));
  return issued.map((each) => ({ requestId: idOf.get(each.token)!, ...each }));
}
