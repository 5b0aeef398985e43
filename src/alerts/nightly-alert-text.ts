import { formatWallClock } from '@recon/protocol';
import type { NewAlert } from './new-alert.ts';

/**
 * The words of the nightly alerts: one message a person reads in a chat tool or an e-mail, saying which run, what
 * went wrong, and the command to look closer. Plain text with `code` for commands, which Slack and Mattermost show
 * as code and an e-mail reader reads as is. Recon's own words, counts and ids; what a stranger wrote (a file's
 * header in a failure, the service's message) only through `quote` (channel-safe-text.ts), once, however many
 * batches failed the same way.
 */
export interface FinishedRun {
  readonly nightlyRunId: string;
  readonly runDate: string;
  readonly state: string;
  readonly failure: string | null;
  readonly reconciliationRunId: string | null;
  readonly suspectReason: string | null;
  /** The run's batches given up, with the latest request's failure of each, in batch order. */
  readonly givenUp: readonly { readonly batch: number | null; readonly failure: string | null }[];
}

/** Quotes a stranger's text for an alert: escaped for every channel and bounded (quoteForAlert). */
export type Quote = (text: string) => string;

/** Batch numbers named in an alert: a run of hundreds gives up every batch the same way, and `recon runs` has them. */
const BATCHES_NAMED = 5;

export function failedRunAlert(run: FinishedRun, quote: Quote): NewAlert {
  const report = run.reconciliationRunId
    ? ` Its reconciliation: \`recon report --run ${run.reconciliationRunId}\`.`
    : '';
  const given = run.givenUp.length > 0 ? givenUpBatches(run.givenUp, quote) : undefined;
  // Without a batch given up (a run failed some other way), the run's own failure is the reason.
  const why = given?.why ?? `Its reason, as recorded: ${quote(run.failure ?? 'no reason recorded')}`;
  return {
    cause: 'nightly_failed',
    key: run.runDate,
    title: `recon: the nightly run of ${run.runDate} failed`,
    text:
      `recon: the nightly run of ${run.runDate} failed${given ? `: ${given.what}` : ''}. ${why}.${report} ` +
      `See \`recon runs\` (nightly run ${run.nightlyRunId}) for every batch and reason.`,
    detail: given ? `${given.what}. ${why}` : why,
    nightlyRunId: run.nightlyRunId,
    nightlyDate: run.runDate,
    state: run.state,
    ...withReconciliation(run),
  };
}

/** How many batches were given up, which, and the first one's reason quoted once, with how many others differ. */
function givenUpBatches(givenUp: FinishedRun['givenUp'], quote: Quote): { what: string; why: string } {
  const count = givenUp.length;
  const numbers = givenUp.map((batch) => String(batch.batch ?? '-'));
  const named =
    count <= BATCHES_NAMED
      ? numbers.join(', ')
      : `${numbers.slice(0, BATCHES_NAMED).join(', ')} and ${count - BATCHES_NAMED} more`;
  const reasons = [...new Set(givenUp.map((batch) => batch.failure ?? 'no reason recorded'))];
  const others = reasons.length > 1 ? ` (and ${reasons.length - 1} other reason(s))` : '';
  return count === 1
    ? {
        what: `1 export batch given up (batch ${named}), its orders reconciled without it`,
        why: `Its reason, as recorded: ${quote(reasons[0]!)}`,
      }
    : {
        what: `${count} export batches given up (batches ${named}), their orders reconciled without them`,
        why: `The first one's reason, as recorded: ${quote(reasons[0]!)}${others}`,
      };
}

export function suspectRunAlert(run: Omit<FinishedRun, 'givenUp'>): NewAlert {
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

function withReconciliation(run: Omit<FinishedRun, 'givenUp'>): Pick<NewAlert, 'fields'> {
  return run.reconciliationRunId ? { fields: { reconciliationRunId: run.reconciliationRunId } } : {};
}
