import { formatWallClock } from '@recon/protocol';
import type { NewAlert } from './new-alert.ts';

/**
 * The words of the nightly alerts: one message a person reads in a chat tool or an e-mail, saying which run, what
 * went wrong, and the command to look closer. Plain text with `code` for commands, which Slack and Mattermost show
 * as code and an e-mail reader reads as is.
 */
export interface FinishedRun {
  readonly nightlyRunId: string;
  readonly runDate: string;
  readonly state: string;
  readonly failure: string | null;
  readonly reconciliationRunId: string | null;
  readonly suspectReason: string | null;
}

export function failedRunAlert(run: FinishedRun): NewAlert {
  const reason = sentence(run.failure ?? 'no reason recorded');
  const report = run.reconciliationRunId
    ? ` Its reconciliation: \`recon report --run ${run.reconciliationRunId}\`.`
    : '';
  return {
    cause: 'nightly_failed',
    key: run.runDate,
    title: `recon: the nightly run of ${run.runDate} failed`,
    text: `recon: the nightly run of ${run.runDate} failed: ${reason}.${report} See \`recon runs\` (nightly run ${run.nightlyRunId}).`,
    detail: reason,
    nightlyRunId: run.nightlyRunId,
    nightlyDate: run.runDate,
    state: run.state,
    ...withReconciliation(run),
  };
}

export function suspectRunAlert(run: FinishedRun): NewAlert {
  const reason = sentence(
    run.suspectReason ?? 'orders in scope expect money but no transaction at all was found: this run proves nothing',
  );
  return {
    cause: 'nightly_suspect',
    key: run.runDate,
    title: `recon: the nightly run of ${run.runDate} is SUSPECT`,
    text: `recon: the nightly run of ${run.runDate} is SUSPECT: ${reason}. See \`recon report --run ${run.reconciliationRunId}\` (nightly run ${run.nightlyRunId}).`,
    detail: reason,
    nightlyRunId: run.nightlyRunId,
    nightlyDate: run.runDate,
    state: run.state,
    ...withReconciliation(run),
  };
}

export interface LateRun {
  readonly runDate: string;
  /** When its schedule slot was (or the run started, for a run started by hand after its slot). */
  readonly dueFrom: Date;
  readonly lateHours: number;
  readonly timezone: string;
  /** Absent: no run was started for the slot. */
  readonly run?: {
    readonly nightlyRunId: string;
    readonly state: string;
    /** Export requests by state, e.g. { ingested: 37, requested: 3 }. */
    readonly requests: Readonly<Record<string, number>>;
  };
}

export function lateRunAlert(late: LateRun): NewAlert {
  const since = `${formatWallClock(late.dueFrom, late.timezone).slice(0, 16)} ${late.timezone}`;
  const head = `recon: the nightly run of ${late.runDate} is late: not reconciled ${late.lateHours} h after ${since}`;
  if (!late.run) {
    return {
      cause: 'nightly_late',
      key: late.runDate,
      title: `recon: the nightly run of ${late.runDate} is late`,
      text:
        `${head}, and no run was started for it (was recon serve down then?). ` +
        `Start it with \`recon nightly --date ${late.runDate}\`.`,
      detail: 'no run was started',
      nightlyDate: late.runDate,
      state: 'not started',
    };
  }
  const requests =
    Object.entries(late.run.requests)
      .map(([state, count]) => `${count} ${state}`)
      .join(', ') || 'none yet';
  const detail = `${late.run.state}; export requests: ${requests}`;
  return {
    cause: 'nightly_late',
    key: late.runDate,
    title: `recon: the nightly run of ${late.runDate} is late`,
    text: `${head}. It is ${detail}. Is a worker running, and do the exports arrive? See \`recon runs\` (nightly run ${late.run.nightlyRunId}).`,
    detail,
    nightlyRunId: late.run.nightlyRunId,
    nightlyDate: late.runDate,
    state: late.run.state,
  };
}

/** A reason without its closing period, to be followed by one. */
function sentence(text: string): string {
  return text.trim().replace(/\.+$/, '');
}

function withReconciliation(run: FinishedRun): Pick<NewAlert, 'fields'> {
  return run.reconciliationRunId ? { fields: { reconciliationRunId: run.reconciliationRunId } } : {};
}
