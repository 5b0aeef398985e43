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
  const requestsOfRun = (states: ('requested' | 'delivered' | 'failed')[]) =>
    db
      .selectFrom('recon.export_requests as r')
      .select('r.request_id')
      .where('r.nightly_run_id', '=', nightlyRunId)
      .where('r.state', 'in', states)
      .where(batchOpen);
  const { failed, waiting } = await db
    .selectNoFrom(({ exists }) => [
      exists(requestsOfRun(['failed']).where(latest)).as('failed'),
      exists(requestsOfRun(['requested', 'delivered'])).as('waiting'),
    ])
    .executeTakeFirstOrThrow();
  return Boolean(failed) || !waiting;
}
