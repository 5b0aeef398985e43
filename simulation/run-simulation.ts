import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { checkInvariants, InvariantBroken } from './invariants.ts';
import { createLedger, recordVersions } from './ledger.ts';
import { planNight } from './steps.ts';
import { createWorld, type World, type WorldOptions } from './world.ts';

export interface SimulationOptions {
  readonly seed: number;
  readonly nights: number;
  /** Stop after this step (a replay up to a failure); all steps when absent. */
  readonly untilStep?: number | undefined;
  /** PostgreSQL to create the simulation's database on; PGlite when absent. */
  readonly databaseUrl?: string | undefined;
  /** A migrated database to copy for the world's own (world.ts): the tests' run has one per backend. */
  readonly template?: WorldOptions['template'];
  /** Told of each step as it ends. */
  readonly onStep?: (step: number, line: string) => void;
}

export interface SimulationFailure {
  readonly step: number;
  readonly night: number;
  readonly kind: string;
  /** What the step did, when it got that far. */
  readonly did: string | null;
  readonly invariant: string;
  readonly message: string;
}

export interface SimulationResult {
  readonly seed: number;
  readonly nights: number;
  readonly steps: number;
  readonly seconds: number;
  readonly failure: SimulationFailure | null;
  /** The transactions and verdicts at the end, hashed: the same seed gives the same, whatever the timing. */
  readonly fingerprint: string | null;
}

const DAY = 86_400_000;

/**
 * One seed's month of nights: the world built, each night's steps drawn and run in order, every invariant checked
 * after each step, stopping at the first broken one.
 */
export async function runSimulation(options: SimulationOptions): Promise<SimulationResult> {
  const started = performance.now();
  // The simulation's days run ahead of the wall clock from the next midnight (UTC): recon stamps what it receives with
  // the wall clock, which then falls within the look-back of every night.
  const start = new Date(Math.ceil(Date.now() / DAY) * DAY);
  const world = await createWorld({
    seed: options.seed,
    databaseUrl: options.databaseUrl,
    start,
    template: options.template,
  });
  const previousTmp = process.env['TMPDIR'];
  // recon's temp folders go where the invariant looks for leftovers.
  process.env['TMPDIR'] = world.tempDir;
  const ledger = createLedger();
  let step = 0;
  let failure: SimulationFailure | null = null;
  let fingerprint: string | null = null;
  try {
    nights: for (let night = 0; night < options.nights; night++) {
      for (const planned of planNight(world, ledger, night)) {
        step += 1;
        let did: string | null = null;
        try {
          did = await planned.run();
          ledger.steps.push(`${step}. night ${night + 1}, ${planned.kind}: ${did}`);
          options.onStep?.(step, `night ${night + 1}, ${planned.kind}: ${did}`);
          recordVersions(ledger, world.service.transactions());
          const nightly = planned.kind === 'nightly run' ? ledger.nightlyRuns.at(-1) : undefined;
          await checkInvariants(world, ledger, nightly);
        } catch (error) {
          failure = {
            step,
            night: night + 1,
            kind: planned.kind,
            did,
            invariant: error instanceof InvariantBroken ? error.invariant : 'the step itself',
            message: error instanceof Error ? error.message : String(error),
          };
          break nights;
        }
        if (options.untilStep !== undefined && step >= options.untilStep) break nights;
      }
    }
    if (!failure) fingerprint = await fingerprintOf(world, start);
  } finally {
    if (previousTmp === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = previousTmp;
    await world.close();
  }
  return {
    seed: options.seed,
    nights: options.nights,
    steps: step,
    seconds: (performance.now() - started) / 1000,
    failure,
    fingerprint,
  };
}

/** The books at the end, as data only: transactions and verdicts, instants counted from the simulation's start. */
async function fingerprintOf(world: World, start: Date): Promise<string> {
  const since = (at: Date | null) => (at === null ? '' : String(at.getTime() - start.getTime()));
  const transactions = await world.database.db
    .selectFrom('recon.transactions')
    .select(['transaction_id', 'identifier', 'order_id', 'operation_type', 'exec_code', 'currency', 'occurred_at'])
    .select(sql<string>`amount_minor::text`.as('amount'))
    .orderBy('transaction_id')
    .execute();
  const verdicts = await world.database.db
    .selectFrom('reporting.reconciliation')
    .select(['order_id', 'status', 'lifecycle', 'currency', 'first_seen'])
    .select(sql<string>`expected_minor::text || ' ' || settled_minor::text || ' ' || delta_minor::text`.as('amounts'))
    .orderBy('order_id')
    .execute();
  const hash = createHash('sha256');
  for (const t of transactions)
    hash.update(
      `${t.transaction_id}|${t.identifier}|${t.order_id}|${t.operation_type}|${t.exec_code}|${t.amount}|${t.currency}|${since(t.occurred_at)}\n`,
    );
  for (const v of verdicts)
    hash.update(`${v.order_id}|${v.status}|${v.lifecycle}|${v.currency}|${v.amounts}|${since(v.first_seen)}\n`);
  return hash.digest('hex').slice(0, 16);
}
