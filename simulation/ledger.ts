import { billingFeesMinorUnits, exportedDate, type SandboxTransaction } from '@recon/sandbox';

/** A run's figures as they stood when it finished: they must never change, unless retention removes the run. */
export interface RunFigures {
  readonly runId: string;
  /** When it started, by the wall clock (what retention counts from). */
  readonly startedAt: Date;
  readonly counts: string;
  readonly totals: string;
  readonly statusTotals: string;
}

/** The latest acknowledgement or reopening the simulation made of an order, and what the exception was then. */
export interface Acknowledgement {
  readonly action: 'ack' | 'reopen';
  readonly status: string;
  readonly firstSeen: string | null;
  /** The statuses the order's verdict has had since, as the runs after it found them. */
  readonly statusesSince: string[];
}

/**
 * What the simulation remembers of what happened, beside what recon stores: every version of every transaction the
 * service ever exported, the figures of every finished run, the accountant's actions. The invariants compare recon's
 * tables with it.
 */
export interface Ledger {
  /** Every exported version of each transaction, oldest first. */
  readonly versions: Map<string, Version[]>;
  /** The newest version of each transaction recon has held so far, by its index in `versions`: it never goes back. */
  readonly held: Map<string, number>;
  /** The latest cutoff a prune was given: runs that started before it may be pruned, no other. */
  pruneCutoff: Date | null;
  readonly runs: Map<string, RunFigures>;
  /** Runs the steps made, each with an instant before it started: none may vanish unless a prune's cutoff passed it. */
  readonly runsMade: Map<string, Date>;
  readonly acknowledgements: Map<string, Acknowledgement>;
  /** Actions the function accepted: the audit trail holds at least these. */
  actions: number;
  /** The wall-clock start of each night: what a prune's cutoff is chosen among. */
  readonly nightStarts: Date[];
  /** The nightly runs, by night. */
  readonly nightlyRuns: { night: number; nightlyRunId: string; runId: string | null; state: string; asOf: Date }[];
  /** Steps that ran, in order, each a line for the report. */
  readonly steps: string[];
  /** Order numbers handed out so far. */
  orders: number;
}

/** One version of a transaction as an export row says it, with the fees the row carries. */
export interface Version {
  readonly signature: string;
  readonly feesMinor: bigint;
  readonly transaction: SandboxTransaction;
}

export function createLedger(): Ledger {
  return {
    versions: new Map(),
    held: new Map(),
    pruneCutoff: null,
    runs: new Map(),
    runsMade: new Map(),
    acknowledgements: new Map(),
    actions: 0,
    nightStarts: [],
    nightlyRuns: [],
    steps: [],
    orders: 0,
  };
}

/** What an export row of the transaction says: recon must hold one of these, never anything else. */
export function exportedSignature(transaction: {
  readonly identifier: string | null;
  readonly orderId: string | null;
  readonly operationType: string;
  readonly amount: bigint | string;
  readonly currency: string | null;
  readonly execCode: string;
  readonly at: number;
}): string {
  return [
    transaction.identifier ?? '',
    transaction.orderId ?? '',
    transaction.operationType.toLowerCase(),
    String(transaction.amount),
    transaction.currency ?? '',
    transaction.execCode.padStart(4, '0'),
    new Date(transaction.at).toISOString(),
  ].join('|');
}

export function serviceSignature(transaction: SandboxTransaction): string {
  return exportedSignature({ ...transaction, at: exportedDate(transaction) });
}

/** Records the service's current versions: a new signature of a transaction is a new version. */
export function recordVersions(ledger: Ledger, transactions: readonly SandboxTransaction[]): void {
  for (const transaction of transactions) {
    const version = {
      signature: serviceSignature(transaction),
      feesMinor: billingFeesMinorUnits(transaction),
      transaction,
    };
    const versions = ledger.versions.get(transaction.transactionId);
    if (!versions) ledger.versions.set(transaction.transactionId, [version]);
    else if (versions.at(-1)!.signature !== version.signature) versions.push(version);
  }
}
