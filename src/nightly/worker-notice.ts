import type { NightlyRunState } from '../db/schema.ts';
import { PRESENCE_LAPSE_MS, type LiveWorkers } from '../queue/worker-presence.ts';

/** A run still untaken this long after the wait began, with workers alive, is worth a word. */
export const NOT_TAKEN_NOTICE_MS = 30_000;

export type WorkerNotice = 'no-worker' | 'not-taken';

/**
 * What someone waiting on a run should be told about the workers that do its work: that none runs (at once), or
 * that none has taken the run for NOT_TAKEN_NOTICE_MS though some run (they are busy). Nothing when all is well.
 */
export function workerNotice(state: NightlyRunState, waitedMs: number, live: LiveWorkers): WorkerNotice | undefined {
  if (state === 'reconciled' || state === 'failed') return undefined;
  if (live.count === 0) return 'no-worker';
  if (state === 'requesting' && waitedMs >= NOT_TAKEN_NOTICE_MS) return 'not-taken';
  return undefined;
}

/** The line that says it, naming what to start. */
export function describeWorkerNotice(notice: WorkerNotice, live: LiveWorkers): string {
  if (notice === 'no-worker') {
    const last = live.lastSeenAt ? `, the last one was seen at ${live.lastSeenAt.toISOString()}` : '';
    return `no worker is running (none seen in the last ${PRESENCE_LAPSE_MS / 1000} s${last}): the run waits until one starts; start \`recon serve\` (receiver, worker and scheduler) or \`recon worker\` on this database`;
  }
  return `no worker has taken the run in ${NOT_TAKEN_NOTICE_MS / 1000} s though ${live.count} worker(s) run: they are busy with other jobs, or stuck (\`recon runs\` lists the runs); still waiting`;
}
