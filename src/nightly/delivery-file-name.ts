import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { ReconError } from '../errors.ts';

/** What a delivered export is: facts recorded before its first ingest attempt, the same for every attempt. */
export interface DeliveryFacts {
  readonly deliveryId: string;
  readonly requestId: string;
  /** YYYY-MM-DD: the date of the nightly run that asked for the export; null for a request of no nightly run. */
  readonly runDate: string | null;
  /** The run's batch of ORDERIDs, and which request for that batch this was (1 for the first). */
  readonly batch: number | null;
  readonly attempt: number;
  /** The multipart filename as the service sent it; null for a raw body. */
  readonly filename: string | null;
  /** When recon sent the request (when it made it, for a request never marked sent): what the export answers to. */
  readonly askedAt: Date;
}

/** Characters of the service's filename kept in the name: enough for any export's name, short in a report. */
const MAX_FILENAME_CHARACTERS = 100;

/**
 * How recon.files names a delivered export: `nightly 2026-11-26 batch 3 attempt 2: transactions.csv.gz (delivery 17)`.
 * It reads as what an accountant asks about (which night, which batch, which request for it), then the name the
 * service gave the file, then the delivery it is in recon.deliveries. Every part is fixed once the delivery is
 * stored, so each ingest attempt gives it the same name, and two deliveries never share one. The filename is a
 * stranger's text, shown in terminals, csv and html: its last path segment only, reduced to letters, digits, `_`,
 * `.` and `-`, as migration 0015 renames the files delivered before (keep the two alike).
 * A request outside nightly runs is named by its id instead: `export request 12: ...`; a raw body has no filename.
 */
export function deliveryFileName(facts: DeliveryFacts): string {
  const request =
    facts.runDate !== null && facts.batch !== null
      ? `nightly ${facts.runDate} batch ${facts.batch} attempt ${facts.attempt}`
      : `export request ${facts.requestId}`;
  const filename = facts.filename === null ? '' : harmlessFilename(facts.filename);
  return `${request}${filename ? `: ${filename}` : ''} (delivery ${facts.deliveryId})`;
}

function harmlessFilename(filename: string): string {
  const lastSegment = filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1);
  return lastSegment.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, MAX_FILENAME_CHARACTERS);
}

/** A stored delivery's facts, from its row, its export request and the request's nightly run. */
export async function readDeliveryFacts(db: Kysely<Schema>, deliveryId: string): Promise<DeliveryFacts> {
  const row = await db
    .selectFrom('recon.deliveries as d')
    .innerJoin('recon.export_requests as r', 'r.request_id', 'd.request_id')
    .leftJoin('recon.nightly_runs as n', 'n.nightly_run_id', 'r.nightly_run_id')
    .select([
      'd.filename',
      'r.request_id',
      'r.batch',
      'r.attempt',
      sql<Date>`coalesce(r.sent_at, r.requested_at)`.as('asked_at'),
      sql<string | null>`to_char(n.run_date, 'YYYY-MM-DD')`.as('run_date'),
    ])
    .where('d.delivery_id', '=', deliveryId)
    .executeTakeFirst();
  if (!row) throw new ReconError('DELIVERY_NOT_FOUND', `delivery ${deliveryId} does not exist`);
  return {
    deliveryId,
    requestId: String(row.request_id),
    runDate: row.run_date,
    batch: row.batch,
    attempt: row.attempt,
    filename: row.filename,
    askedAt: row.asked_at,
  };
}
