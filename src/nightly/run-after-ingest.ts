import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

type Requests = ExpressionBuilder<Schema & { r: Schema['recon.export_requests'] }, 'r'>;

/** No request of r's batch is ingested or given up: the batch is still open. */
const batchOpen = ({ not, exists, selectFrom }: Requests) =>
  not(
    exists(
      selectFrom('recon.export_requests as s')
        .select('s.request_id')
        .whereRef('s.nightly_run_id', '=', 'r.nightly_run_id')
        .whereRef('s.batch', '=', 'r.batch')
        .where('s.state', 'in', ['ingested', 'given_up']),
    ),
  );

/** No later attempt of r's batch: r is the batch's latest request. */
const latest = ({ not, exists, selectFrom }: Requests) =>
  not(
    exists(
      selectFrom('recon.export_requests as s')
        .select('s.request_id')
        .whereRef('s.nightly_run_id', '=', 'r.nightly_run_id')
        .whereRef('s.batch', '=', 'r.batch')
        .whereRef('s.attempt', '>', 'r.attempt'),
    ),
  );

/**
 * Whether a nightly run needs an advance now that one of its deliveries went through ingest: when no batch is open
 * any more (the run can be reconciled), or when an open batch's latest request failed (it must be asked for again).
 * While every open batch still waits on the service, an advance would find nothing to do before the deadlines it
 * has already scheduled one for; so a run of thousands of batches is not read whole again after each file.
 *
 * A batch is open while none of its requests is ingested or given up. Of two ingests ending together, the one that
 * commits last sees both, so the last batch always sends the advance that reconciles.
 */
export async function runNeedsAdvance(db: Kysely<Schema>, nightlyRunId: string): Promise<boolean> {
  // The first batch of each kind, not whether one exists: PostgreSQL plans an EXISTS to stop at the first row it
  // meets, and read the run's done requests in a row to get there, where an ORDER BY batch LIMIT 1 takes one of
  // migration 0021's partial indexes (a few dozen rows, whatever the size of the run).
  const firstOpenBatch = (where: (qb: ReturnType<typeof openRequests>) => ReturnType<typeof openRequests>) =>
    where(openRequests()).select('r.batch').orderBy('r.batch').limit(1);
  const openRequests = () =>
    db.selectFrom('recon.export_requests as r').where('r.nightly_run_id', '=', nightlyRunId).where(batchOpen);
  const { failed, waitingSent, waitingUnsent } = await db
    .selectNoFrom(() => [
      firstOpenBatch((qb) => qb.where('r.state', '=', 'failed').where(latest)).as('failed'),
      firstOpenBatch((qb) =>
        qb.where((eb) =>
          eb.or([
            eb('r.state', '=', 'delivered'),
            eb.and([eb('r.state', '=', 'requested'), eb('r.sent_at', 'is not', null)]),
          ]),
        ),
      ).as('waitingSent'),
      firstOpenBatch((qb) => qb.where('r.state', '=', 'requested').where('r.sent_at', 'is', null)).as('waitingUnsent'),
    ])
    .executeTakeFirstOrThrow();
  return failed !== null || (waitingSent === null && waitingUnsent === null);
}
