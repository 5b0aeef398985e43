import { sql, type Kysely } from 'kysely';
import { DEFAULT_EXPORT_LATE_SECONDS } from '../config/config.ts';
import type { NightlyRunState, Schema } from '../db/schema.ts';

export interface NightlyRunReport {
  readonly nightlyRunId: string;
  readonly runDate: string;
  readonly state: NightlyRunState;
  readonly asOf: string;
  readonly orders: number | null;
  readonly batches: number | null;
  /** Requests by state: requested, delivered, ingested, failed, timed_out, given_up. */
  readonly requests: Readonly<Record<string, number>>;
  readonly reconciliationRunId: string | null;
  readonly failure: string | null;
  /** Delivered files that failed to ingest, quarantined ones included (their batches were asked for again). */
  readonly failedDeliveries: readonly FailedDelivery[];
  /** Requests sent and still without an export after RECON_EXPORT_LATE_SECONDS, oldest first. */
  readonly lateExports: readonly LateExport[];
  /** The run's probe of its callback base, once answered: whether the service's deliveries can reach recon. */
  readonly callbackProbe: RunCallbackProbe | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

export interface FailedDelivery {
  readonly deliveryId: string;
  readonly batch: number | null;
  readonly attempt: number;
  /** Given up after two attempts that died or failed the same way, rather than failed by its content. */
  readonly quarantined: boolean;
  readonly failure: string | null;
}

export interface RunCallbackProbe {
  readonly callbackBaseUrl: string;
  readonly reachable: boolean;
  readonly detail: string;
  readonly checkedAt: string;
}

export interface LateExport {
  readonly batch: number | null;
  readonly attempt: number;
  /** The end of the request's CALLBACKURL: what the receiver's and a proxy's access logs show. */
  readonly token: string;
  readonly sentAt: string;
  /** How long the export has been awaited, in whole seconds. */
  readonly waitingSeconds: number;
}

export interface ListNightlyRunsOptions {
  readonly nightlyRunId?: string;
  readonly limit?: number;
  /** RECON_EXPORT_LATE_SECONDS. */
  readonly lateAfterSeconds?: number;
  readonly now?: Date;
}

/** Nightly runs, newest first, with their export requests counted by state (`recon runs`, `recon nightly`). */
export async function listNightlyRuns(
  db: Kysely<Schema>,
  options: ListNightlyRunsOptions = {},
): Promise<NightlyRunReport[]> {
  let query = db
    .selectFrom('recon.nightly_runs as n')
    .leftJoin('recon.callback_probes as p', (join) =>
      join.onRef('p.nightly_run_id', '=', 'n.nightly_run_id').on('p.reachable', 'is not', null),
    )
    .select([
      'n.nightly_run_id',
      sql<string>`n.run_date::text`.as('run_date'),
      'n.state',
      'n.as_of',
      'n.orders',
      'n.batches',
      'n.reconciliation_run_id',
      'n.failure',
      'n.started_at',
      'n.finished_at',
      'p.callback_base_url as probe_base',
      'p.reachable as probe_reachable',
      'p.detail as probe_detail',
      'p.checked_at as probe_checked_at',
    ])
    .select((eb) =>
      eb
        .selectFrom((counting) =>
          counting
            .selectFrom('recon.export_requests as r')
            .select(['r.state', (count) => count.fn.countAll<number>().as('count')])
            .whereRef('r.nightly_run_id', '=', 'n.nightly_run_id')
            .groupBy('r.state')
            .as('counted'),
        )
        .select(
          sql<Record<string, number> | string | null>`jsonb_object_agg(counted.state, counted.count)`.as('requests'),
        )
        .as('requests'),
    )
    .orderBy('n.run_date', 'desc')
    .limit(options.limit ?? 100);
  if (options.nightlyRunId !== undefined) query = query.where('n.nightly_run_id', '=', options.nightlyRunId);
  const rows = await query.execute();
  const runIds = rows.map((row) => String(row.nightly_run_id));
  const failed = await failedDeliveries(db, runIds);
  const now = options.now ?? new Date();
  const late = await lateExports(db, runIds, now, options.lateAfterSeconds ?? DEFAULT_EXPORT_LATE_SECONDS);
  return rows.map((row) => ({
    nightlyRunId: String(row.nightly_run_id),
    runDate: row.run_date,
    state: row.state,
    asOf: new Date(row.as_of).toISOString(),
    orders: row.orders,
    batches: row.batches,
    requests:
      (typeof row.requests === 'string' ? (JSON.parse(row.requests) as Record<string, number>) : row.requests) ?? {},
    reconciliationRunId: row.reconciliation_run_id === null ? null : String(row.reconciliation_run_id),
    failure: row.failure,
    failedDeliveries: failed.get(String(row.nightly_run_id)) ?? [],
    lateExports: late.get(String(row.nightly_run_id)) ?? [],
    callbackProbe:
      row.probe_reachable === null || row.probe_base === null
        ? null
        : {
            callbackBaseUrl: row.probe_base,
            reachable: row.probe_reachable,
            detail: row.probe_detail ?? '',
            checkedAt: new Date(row.probe_checked_at!).toISOString(),
          },
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
  }));
}

async function failedDeliveries(
  db: Kysely<Schema>,
  nightlyRunIds: readonly string[],
): Promise<Map<string, FailedDelivery[]>> {
  const byRun = new Map<string, FailedDelivery[]>();
  if (nightlyRunIds.length === 0) return byRun;
  const rows = await db
    .selectFrom('recon.deliveries as d')
    .innerJoin('recon.export_requests as r', 'r.request_id', 'd.request_id')
    .select(['r.nightly_run_id', 'd.delivery_id', 'r.batch', 'r.attempt', 'd.quarantined_at', 'd.failure'])
    .where('d.state', '=', 'failed')
    .where('r.nightly_run_id', 'in', nightlyRunIds)
    .orderBy('d.delivery_id')
    .execute();
  for (const row of rows) {
    const run = String(row.nightly_run_id);
    if (!byRun.has(run)) byRun.set(run, []);
    byRun.get(run)!.push({
      deliveryId: String(row.delivery_id),
      batch: row.batch,
      attempt: row.attempt,
      quarantined: row.quarantined_at !== null,
      failure: row.failure,
    });
  }
  return byRun;
}

async function lateExports(
  db: Kysely<Schema>,
  nightlyRunIds: readonly string[],
  now: Date,
  lateAfterSeconds: number,
): Promise<Map<string, LateExport[]>> {
  const byRun = new Map<string, LateExport[]>();
  if (nightlyRunIds.length === 0) return byRun;
  const rows = await db
    .selectFrom('recon.export_requests')
    .select(['nightly_run_id', 'batch', 'attempt', 'token', 'sent_at'])
    .where('state', '=', 'requested')
    .where('sent_at', '<=', new Date(now.getTime() - lateAfterSeconds * 1000))
    .where('nightly_run_id', 'in', nightlyRunIds)
    .orderBy('sent_at')
    .orderBy('request_id')
    .execute();
  for (const row of rows) {
    const run = String(row.nightly_run_id);
    const sentAt = new Date(row.sent_at!);
    if (!byRun.has(run)) byRun.set(run, []);
    byRun.get(run)!.push({
      batch: row.batch,
      attempt: row.attempt,
      token: row.token,
      sentAt: sentAt.toISOString(),
      waitingSeconds: Math.floor((now.getTime() - sentAt.getTime()) / 1000),
    });
  }
  return byRun;
}

/** One line per run, and one more per failed delivery and per late export, for a terminal. */
export function formatNightlyRun(run: NightlyRunReport): string {
  const requests =
    Object.entries(run.requests)
      .map(([state, count]) => `${count} ${state}`)
      .join(', ') || 'none';
  const reconciliation = run.reconciliationRunId ? `, reconciliation run ${run.reconciliationRunId}` : '';
  const failure = run.failure ? ` (${run.failure})` : '';
  const line = `${run.runDate}  run ${run.nightlyRunId}  ${run.state}${failure}  orders ${run.orders ?? '-'} in ${run.batches ?? '-'} batch(es); requests: ${requests}${reconciliation}`;
  const deliveries = run.failedDeliveries.map(
    (delivery) =>
      `  delivery ${delivery.deliveryId} (batch ${delivery.batch ?? '-'}, request ${delivery.attempt}) ${delivery.quarantined ? 'quarantined' : 'failed'}: ${delivery.failure ?? 'no reason recorded'}`,
  );
  const late = run.lateExports.map((request) => `  ${describeLateExport(request)}`);
  const probe = run.callbackProbe;
  const unreachable =
    probe && !probe.reachable
      ? [`  callback base ${probe.callbackBaseUrl} unreachable at ${probe.checkedAt}: ${probe.detail}`]
      : [];
  return [line, ...unreachable, ...deliveries, ...late].join('\n');
}

export function describeLateExport(request: LateExport): string {
  return `batch ${request.batch ?? '-'} (request ${request.attempt}): export late, awaited ${formatWait(request.waitingSeconds)} since ${request.sentAt} on token ${request.token}`;
}

function formatWait(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}
