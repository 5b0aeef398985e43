import { createHash } from 'node:crypto';
import type { FileIdentity } from '../ingest/files-repository.ts';
import { joinIds } from '@recon/protocol';
import type { ExportAnswer } from '../parse/export-answer.ts';
import type { ExportUnit } from '../client/export-accounts.ts';

/**
 * A backfill's getTransactions request as recon.files records it: one row per request, its name saying what was
 * asked and when, its sha256 and size those of the answer's canonical text (see readExportAnswer), so that an
 * identical answer to the same request is recognised as a file loaded before is.
 */
export function backfillFileIdentity(
  answer: ExportAnswer,
  orderIds: readonly string[],
  requestedAt: Date,
  account?: ExportUnit,
): FileIdentity {
  return {
    name: backfillFileName(orderIds, requestedAt, account),
    arrival: { kind: 'backfill', askedAt: requestedAt },
    sha256: createHash('sha256').update(answer.text).digest('hex'),
    sizeBytes: Buffer.byteLength(answer.text),
    compression: 'none',
  };
}

/**
 * Ids beyond this many characters are counted, not listed: the name is shown as the source of every transaction
 * in an explanation, and a batch of 200 ids of 40 characters would repeat 8 KB in each.
 */
const MAX_LISTED_ID_CHARACTERS = 100;

/**
 * `backfill:getTransactions 2026-11-20T15:00:03Z A;B;C (+197 more)`: the instant to the second, in UTC; with the
 * account asked when several are (`... from shop-wallet`, `... from group of shop-wallet`).
 */
export function backfillFileName(orderIds: readonly string[], requestedAt: Date, account?: ExportUnit): string {
  const listed: string[] = [];
  for (const id of orderIds) {
    if (listed.length > 0 && joinIds([...listed, id]).length > MAX_LISTED_ID_CHARACTERS) break;
    listed.push(id);
  }
  const more = orderIds.length - listed.length;
  const instant = requestedAt.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const from =
    account === undefined ? '' : ` from ${account.scope === 'CLIENTSGROUP' ? 'group of ' : ''}${account.identifier}`;
  return `backfill:getTransactions ${instant} ${joinIds(listed)}${more > 0 ? ` (+${more} more)` : ''}${from}`;
}
