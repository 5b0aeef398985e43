import { ReconError } from '../errors.ts';
import { describeFormat, FIELD_DICTIONARY, matchesFormat, splitIds } from '@recon/protocol';

/**
 * The ORDERIDs an operator asks a backfill for: from `--order-id` and from an `--orders-file`, checked against the
 * protocol's ORDERID format before anything is sent, so a bad id is a usage error naming where it was written
 * rather than a 1002 from the service for a whole batch.
 */

/** What `#` starts: a line of comment, never part of an id (ids are trimmed, so `  # x` is a comment too). */
const COMMENT = '#';

/**
 * One ORDERID per line; blank lines and lines starting with `#` are skipped; surrounding spaces (a CR of a CRLF
 * file included) and a byte order mark are dropped. `label` names the file in errors, with the line number.
 */
export function parseOrderIdsFile(text: string, label: string): string[] {
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split('\n');
  const ids: string[] = [];
  lines.forEach((line, index) => {
    const id = line.trim();
    if (id === '' || id.startsWith(COMMENT)) return;
    checkOrderId(id, `${label}:${index + 1}`);
    ids.push(id);
  });
  return ids;
}

/**
 * An id the service can be asked for: the ORDERID format (1-40 characters), and no `;`, which separates the ids
 * of one getTransactions request and would turn one id into two. `where` says where the id was written.
 */
export function checkOrderId(id: string, where: string): void {
  if (id.trim() === '') throw new ReconError('USAGE', `${where}: an empty ORDERID`);
  const format = FIELD_DICTIONARY.ORDERID;
  if (!matchesFormat(format, id)) {
    throw new ReconError('USAGE', `${where}: ORDERID ${JSON.stringify(id)} is not ${describeFormat(format)}`);
  }
  if (splitIds(id).length > 1) {
    throw new ReconError(
      'USAGE',
      `${where}: ORDERID ${JSON.stringify(id)} contains ";", which separates the ids of a request`,
    );
  }
}

/** Each id once, in the order first given. */
export function uniqueOrderIds(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

/** The ids in requests of at most `size` ORDERIDs each (RECON_EXPORT_BATCH_SIZE), in order. */
export function batchOrderIds(ids: readonly string[], size: number): string[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`batch size must be a positive integer, got ${size}`);
  const batches: string[][] = [];
  for (let start = 0; start < ids.length; start += size) batches.push(ids.slice(start, start + size));
  return batches;
}
