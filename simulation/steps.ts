import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { dateInZone } from '@recon/protocol';
import type { MerchantOrder, SandboxAccount, SandboxTransaction } from '@recon/sandbox';
import { actOnException } from '../src/exceptions/exception-action.ts';
import { listNightlyRuns } from '../src/nightly/nightly-run-report.ts';
import { triggerNightlyRun } from '../src/nightly/nightly-scheduler.ts';
import { reconcile } from '../src/reconcile/reconcile.ts';
import { prune } from '../src/retention/prune.ts';
import { MERGE_LOCK } from '../src/ingest/staged-file.ts';
import { QUEUES } from '../src/queue/job-queue.ts';
import { removeStaleTempFolders } from '../src/temp/temp-folder.ts';
import { advanceSender } from '../pipelines/nightly/nightly-worker.ts';
import { backfill } from '../pipelines/backfill.ts';
import type { Ledger } from './ledger.ts';
import { NO_FAULTS, type World } from './world.ts';

/** One thing that happens, drawn from the seed. `run` does it and returns a line saying what it did. */
export interface Step {
  readonly night: number;
  readonly kind: string;
  run(): Promise<string>;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** How long a nightly run may take in real time before the simulation calls it stuck. */
const NIGHT_LIMIT_MS = 120_000;
/** The recon command, run from its sources as `npm start`'s build would: a worker process of its own. */
const CLI = fileURLToPath(new URL('../cli/main.ts', import.meta.url));

/**
 * The steps of night `night`, drawn from the seed: the shop's day at the service (orders paid, authorized, captured,
 * refunded, approvals answered late, a result revised, a payment on the wrong account), the merchant's books (orders
 * booked, edited, some never), the network's faults for the night's deliveries, and the operators (the nightly run,
 * sometimes with a `reconcile --all` or a prune beside it, a backfill, a prune, an accountant at work).
 */
export function planNight(world: World, ledger: Ledger, night: number): Step[] {
  const { random } = world;
  const dayStart = new Date(world.sandbox.clock.now().getTime());
  const steps: Step[] = [];
  const step = (kind: string, run: () => Promise<string>) => steps.push({ night, kind, run });

  step('dawn', async () => {
    ledger.nightStarts[night] = new Date();
    return `night ${night + 1} begins at ${dayStart.toISOString()}`;
  });
  const shopping = random.int(2, 4);
  for (let i = 0; i < shopping; i++) step('shop', () => shop(world, ledger, night, random.int(2, 6)));
  if (random.chance(0.6)) step('capture', () => capture(world));
  if (random.chance(0.5)) step('refund', () => refund(world));
  if (random.chance(0.4)) step('approval', () => answerApprovals(world));
  if (random.chance(0.15)) step('paid twice', () => payTwice(world));
  if (random.chance(0.12)) step('revise', () => revise(world));
  if (random.chance(0.3)) step('edit books', () => editBooks(world));
  if (random.chance(0.3)) step('replay notification', () => replayNotification(world));
  if (random.chance(0.35)) step('release held', () => releaseHeld(world));
  if (random.chance(0.2)) step('backfill', () => backfillSome(world, ledger));
  if (random.chance(0.1)) step('reconcile --all', () => reconcileAll(world, ledger));
  if (random.chance(0.2)) step('accountant', () => accountant(world, ledger));
  if (random.chance(0.12) && night > 0) step('prune', () => pruneRuns(world, ledger, night));
  // PostgreSQL only: a large run writes its slices over several connections, its row committed before it finishes.
  if (world.databaseUrl && random.chance(0.15) && night > 0)
    step('prune beside a run in flight', () => pruneBesideRunInFlight(world, ledger));
  step('import orders', async () => `imported ${await world.books.importChanges(world.database)} orders`);

  const faulty = random.chance(0.4);
  const faults = faulty
    ? {
        drop: random.pick([0, 0.1, 0.25]),
        duplicate: random.pick([0, 0.1]),
        hold: random.pick([0, 0.1, 0.2]),
        abort: random.pick([0, 0.1]),
      }
    : NO_FAULTS;
  const forge = random.chance(0.25);
  const late = random.chance(0.25);
  const beside = random.pick(['alone', 'alone', 'alone', 'reconcile --all', 'prune'] as const);
  // PostgreSQL only (PGlite is one process's): a worker process killed in the middle of an ingest, and this process's
  // connections to the server cut for a moment.
  const kill = world.workerProcessEnv !== undefined && random.chance(0.08);
  const cut = world.connections !== undefined && random.chance(0.1);
  step('nightly run', () => nightlyRun(world, ledger, night, dayStart, { faults, forge, late, beside, kill, cut }));
  return steps;
}

/** Moves the sandbox clock on by a few minutes: every operation of the day at an instant of its own. */
function tick(world: World, maxMinutes = 40): void {
  world.sandbox.clock.advance(world.random.int(1, maxMinutes) * MINUTE);
}

function accountFor(world: World, method: 'wallet' | 'instalment'): SandboxAccount {
  return world.accounts.find((account) => account.paymentMethods?.includes(method))!;
}

/** The account a transaction went through, to sign what follows it (a capture, a refund). */
function accountOf(world: World, transaction: SandboxTransaction): SandboxAccount {
  return world.accounts.find((account) => account.identifier === transaction.identifier)!;
}

async function shop(world: World, ledger: Ledger, night: number, count: number): Promise<string> {
  const { random, service, books, sandbox } = world;
  const made: string[] = [];
  for (let i = 0; i < count; i++) {
    tick(world);
    const orderId = `S${world.seed}-${String(night + 1).padStart(2, '0')}-${String(++ledger.orders).padStart(4, '0')}`;
    const method = random.chance(0.6) ? 'wallet' : 'instalment';
    const operation = method === 'wallet' && random.chance(0.7) ? 'payment' : 'authorization';
    const amount = method === 'instalment' ? random.bigint(15_000n, 200_000n) : random.bigint(500n, 150_000n);
    const currency = 'EUR';
    // A checkout that sends a payment through the account of the other method, now and then.
    const misrouted = random.chance(0.05);
    const account = accountFor(world, misrouted ? (method === 'wallet' ? 'instalment' : 'wallet') : method);
    const transactionId = service.start({ orderId, method, operation, amount, currency }, account);
    const draw = random.next();
    const outcome =
      draw < 0.72
        ? 'validated'
        : draw < 0.82
          ? 'refused'
          : draw < 0.9 && method === 'instalment'
            ? 'pending'
            : 'abandoned';
    if (outcome !== 'abandoned') service.finish(transactionId, outcome === 'pending' ? 'pending' : outcome);
    const booked: MerchantOrder = {
      orderId,
      amount,
      currency,
      status: outcome === 'refused' ? 'cancelled' : operation === 'payment' ? 'paid' : 'authorized',
      refunded: 0n,
      paymentMethod: method,
      createdAt: sandbox.clock.now(),
    };
    const mistake = random.next();
    // Orders the shop never booked, and the books' mistakes: another currency, another amount.
    if (mistake < 0.04) {
      made.push(`${orderId} (${method} ${operation} ${outcome}, not booked)`);
      continue;
    }
    books.put(
      mistake < 0.07 ? { ...booked, currency: 'USD' } : mistake < 0.1 ? { ...booked, amount: amount + 100n } : booked,
    );
    made.push(`${orderId} (${method} ${operation} ${outcome}${misrouted ? ', on the other account' : ''})`);
  }
  return `shoppers: ${made.join(', ')}`;
}

/** Succeeded authorizations not captured yet, oldest first. */
function uncaptured(world: World): SandboxTransaction[] {
  const transactions = world.service.transactions();
  const captured = new Set(transactions.filter((t) => t.operationType === 'capture').map((t) => t.parentTransactionId));
  return transactions.filter(
    (t) => t.operationType === 'authorization' && t.status === 'succeeded' && !captured.has(t.transactionId),
  );
}

async function capture(world: World): Promise<string> {
  const { random, service, books } = world;
  const done: string[] = [];
  for (const authorization of uncaptured(world)) {
    if (!random.chance(0.4)) continue;
    tick(world, 10);
    const partial = random.chance(0.15);
    const amount = partial ? authorization.amount - random.bigint(1n, authorization.amount / 3n) : authorization.amount;
    if (!service.capture(authorization, amount, accountOf(world, authorization))) {
      done.push(`${authorization.orderId} refused`);
      continue;
    }
    const order = books.get(authorization.orderId);
    // The shop books the capture; a partial one keeps the authorized amount now and then (a mistake).
    if (order) books.put({ ...order, status: 'paid', amount: partial && random.chance(0.5) ? amount : order.amount });
    done.push(`${authorization.orderId}${partial ? ` partially (${amount})` : ''}`);
  }
  return `captured: ${done.join(', ') || 'nothing'}`;
}

async function refund(world: World): Promise<string> {
  const { random, service, books } = world;
  const refundable = service
    .transactions()
    .filter(
      (t) =>
        (t.operationType === 'payment' || t.operationType === 'capture') &&
        t.status === 'succeeded' &&
        (t.restingAmount ?? t.amount) > 0n,
    );
  const done: string[] = [];
  for (const paid of refundable) {
    if (!random.chance(0.25)) continue;
    tick(world, 10);
    const resting = paid.restingAmount ?? paid.amount;
    const full = random.chance(0.5);
    const amount = full ? resting : random.bigint(1n, resting);
    if (!service.refund(paid, amount, accountOf(world, paid))) continue;
    const order = books.get(paid.orderId);
    if (order && !random.chance(0.05)) {
      // The books never say more refunded than the order's amount (a paid-twice order refunded twice, say).
      const refunded = order.refunded + amount > order.amount ? order.amount : order.refunded + amount;
      books.put({ ...order, refunded, status: refunded >= order.amount ? 'refunded' : 'partially_refunded' });
    }
    done.push(`${paid.orderId} ${amount}`);
  }
  return `refunded: ${done.join(', ') || 'nothing'}`;
}

async function answerApprovals(world: World): Promise<string> {
  const { random, service } = world;
  const done: string[] = [];
  for (const pending of service.transactions().filter((t) => t.status === 'pending-approval')) {
    if (!random.chance(0.5)) continue;
    tick(world, 10);
    const outcome = random.chance(0.7) ? 'validated' : 'refused';
    if (service.finish(pending.transactionId, outcome)) done.push(`${pending.orderId} ${outcome}`);
  }
  return `approvals answered late: ${done.join(', ') || 'none'}`;
}

async function payTwice(world: World): Promise<string> {
  const { random, service } = world;
  const paid = service.transactions().filter((t) => t.operationType === 'payment' && t.status === 'succeeded');
  if (paid.length === 0) return 'nobody paid twice';
  const first = random.pick(paid);
  tick(world, 10);
  const again = service.start(
    {
      orderId: first.orderId,
      method: first.method,
      operation: 'payment',
      amount: first.amount,
      currency: first.currency,
    },
    accountOf(world, first),
  );
  service.finish(again, 'validated');
  return `${first.orderId} paid twice`;
}

async function revise(world: World): Promise<string> {
  const { random, service } = world;
  const paid = service.transactions().filter((t) => t.operationType === 'payment' && t.status === 'succeeded');
  if (paid.length === 0) return 'nothing to revise';
  const payment = random.pick(paid);
  service.revise(payment.transactionId, '4001', 'Refused after review');
  return `the service revised ${payment.transactionId} (${payment.orderId}) to 4001`;
}

async function editBooks(world: World): Promise<string> {
  const { random, books } = world;
  const orders = books.all();
  if (orders.length === 0) return 'nothing to edit';
  const order = random.pick(orders);
  const edit = random.pick(['cancel', 'amount', 'paid'] as const);
  books.put(
    edit === 'cancel'
      ? { ...order, status: 'cancelled' }
      : edit === 'amount'
        ? { ...order, amount: order.amount + random.bigint(1n, 500n) }
        : { ...order, status: 'paid' },
  );
  return `the books edited ${order.orderId}: ${edit}`;
}

async function replayNotification(world: World): Promise<string> {
  const { random, sandbox, services } = world;
  const delivered = sandbox.notifications.deliveries().filter((d) => d.state === 'delivered');
  if (delivered.length === 0) return 'no notification to replay';
  const notification = random.pick(delivered);
  const times = random.int(1, 3);
  for (let i = 0; i < times; i++) {
    await fetch(`${services.receiver!.url}/notify`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(notification.fields as Record<string, string>).toString(),
    });
  }
  return `notification of ${notification.fields['TRANSACTIONID']} replayed ${times} time(s)`;
}

async function releaseHeld(world: World): Promise<string> {
  const held = world.network.held();
  await world.network.releaseHeld();
  return `released ${held} held delivery(ies)`;
}

async function backfillSome(world: World, ledger: Ledger): Promise<string> {
  const { random, books, config, exportAccounts, sandbox, database } = world;
  const known = [...new Set(world.service.transactions().map((t) => t.orderId))].sort();
  if (known.length === 0) return 'nothing to backfill';
  const orderIds = [...new Set(Array.from({ length: random.int(1, 4) }, () => random.pick(known)))];
  await books.importChanges(database);
  const startedAfter = new Date();
  const result = await backfill(database, exportAccounts, {
    orderIds,
    batchSize: config.nightly.exportBatchSize,
    toleranceMinor: config.reconcile.toleranceMinor,
    graceHours: config.reconcile.graceHours,
    // Ages at the simulation's instant; the requests stamped by the wall clock, as the nightly worker stamps its
    // own: stamped by the simulation's clock, days ahead, a backfill's file read as asked after every later night's.
    asOf: sandbox.clock.now(),
  });
  ledger.runsMade.set(result.run.runId, startedAfter);
  return `backfilled ${orderIds.join(', ')}: run ${result.run.runId}`;
}

async function reconcileAll(world: World, ledger: Ledger): Promise<string> {
  const startedAfter = new Date();
  const summary = await reconcile(world.database, {
    scope: { kind: 'all' },
    asOf: world.sandbox.clock.now(),
    toleranceMinor: world.config.reconcile.toleranceMinor,
    graceHours: world.config.reconcile.graceHours,
  });
  ledger.runsMade.set(summary.runId, startedAfter);
  return `reconcile --all: run ${summary.runId}, ${summary.verdictsChanged} changed`;
}

async function accountant(world: World, ledger: Ledger): Promise<string> {
  const { random, database } = world;
  const open = await database.db
    .selectFrom('reporting.exceptions')
    .select(['order_id', 'status', 'acknowledged', sql<string | null>`first_seen::text`.as('first_seen')])
    .orderBy('order_id')
    .execute();
  if (open.length === 0) return 'the accountant found nothing open';
  const done: string[] = [];
  for (let i = random.int(1, 3); i > 0; i--) {
    const exception = random.pick(open);
    const action = exception.acknowledged
      ? random.pick(['note', 'reopen'] as const)
      : random.pick(['ack', 'note'] as const);
    await actOnException(database.db, {
      orderId: exception.order_id,
      action,
      note: action === 'reopen' && random.chance(0.5) ? undefined : `looked at ${exception.order_id}`,
      actor: random.pick(['alice', 'bob']),
    });
    ledger.actions += 1;
    if (action !== 'note') {
      ledger.acknowledgements.set(exception.order_id, {
        action,
        status: exception.status,
        firstSeen: exception.first_seen,
        statusesSince: [exception.status],
      });
      exception.acknowledged = action === 'ack';
    }
    done.push(`${action} ${exception.order_id}`);
  }
  return `the accountant: ${done.join(', ')}`;
}

async function pruneRuns(world: World, ledger: Ledger, night: number): Promise<string> {
  const back = world.random.int(1, Math.min(night, 4));
  const report = await pruneBefore(world, ledger, ledger.nightStarts[night - back]!);
  return `prune of what started before night ${night - back + 1}: ${report}`;
}

/** `recon prune` with a retention that ends at `cutoff`: what started before it is old. */
async function pruneBefore(world: World, ledger: Ledger, cutoff: Date): Promise<string> {
  if (ledger.pruneCutoff === null || cutoff > ledger.pruneCutoff) ledger.pruneCutoff = cutoff;
  const report = await prune(world.database.db, {
    retention: { deliveryDays: 1, runDays: 1, failedDeliveryDays: 1 },
    now: new Date(cutoff.getTime() + DAY),
    dryRun: false,
  });
  return `${report.runs.runs} runs, ${report.deliveries.deliveries} deliveries`;
}

interface NightOptions {
  readonly faults: World['networkState']['faults'];
  readonly forge: boolean;
  readonly late: boolean;
  readonly kill: boolean;
  readonly cut: boolean;
  readonly beside: 'alone' | 'reconcile --all' | 'prune';
}

async function nightlyRun(
  world: World,
  ledger: Ledger,
  night: number,
  dayStart: Date,
  options: NightOptions,
): Promise<string> {
  const { database, services, sandbox, networkState } = world;
  const asOf = new Date(dayStart.getTime() + 23 * HOUR);
  sandbox.clock.advance(Math.max(0, asOf.getTime() - sandbox.clock.now().getTime()));
  networkState.faults = options.faults;
  const runDate = dateInZone(asOf, 'UTC');
  // A stranger's rows ride on the first export of the night (batch 1, first request, first account asked).
  networkState.forgeRunDate = options.forge ? runDate : null;
  // Or it is held back while the service changes one of its orders, and arrives after the run, older than what the
  // run ingested for that batch.
  networkState.lateRunDate = options.late ? runDate : null;
  networkState.onLate = (orderIds, identifiers) => changeDuringTheNight(world, orderIds, identifiers);
  const killing = options.kill ? await workerProcessHeldAtItsMerge(world) : undefined;
  const { nightlyRunId } = await triggerNightlyRun(database.db, runDate, asOf, advanceSender(services.boss));
  world.worker.wake(QUEUES.advanceNightlyRun);
  const interruptions = [
    killing?.killMidIngest() ?? Promise.resolve(''),
    options.cut ? cutConnections(world) : Promise.resolve(''),
  ];
  const beside =
    options.beside === 'reconcile --all'
      ? reconcileAll(world, ledger)
      : options.beside === 'prune'
        ? pruneRuns(world, ledger, Math.max(night, 1)).catch((error: unknown) => `prune failed: ${String(error)}`)
        : Promise.resolve('');
  const started = Date.now();
  const nightStarted = new Date(started);
  // The simulation's own reads ride out a connection cut as recon does: the next one goes through.
  const readRun = async () => (await listNightlyRuns(database.db, { nightlyRunId }).catch(() => []))[0];
  let run = await readRun();
  while (run?.state !== 'reconciled' && run?.state !== 'failed') {
    if (Date.now() - started > NIGHT_LIMIT_MS) throw new Error(`nightly run ${runDate} stuck in ${run?.state}`);
    await sleep(20);
    run = await readRun();
  }
  const interrupted = (await Promise.all(interruptions)).filter(Boolean);
  const besideLine = await beside;
  networkState.faults = NO_FAULTS;
  networkState.forgeRunDate = null;
  networkState.lateRunDate = null;
  await world.network.idle();
  const released = options.late ? world.network.held() : 0;
  if (options.late) await world.network.releaseHeld();
  ledger.nightlyRuns.push({ night, nightlyRunId, runId: run.reconciliationRunId, state: run.state, asOf });
  if (run.reconciliationRunId) ledger.runsMade.set(run.reconciliationRunId, nightStarted);
  sandbox.clock.advance(dayStart.getTime() + DAY - sandbox.clock.now().getTime());
  const faults = Object.entries(options.faults)
    .filter(([, p]) => p > 0)
    .map(([fault, p]) => `${fault} ${p}`);
  return (
    `nightly run ${runDate}: ${run.state}, run ${run.reconciliationRunId ?? '-'}` +
    (faults.length ? `; network: ${faults.join(', ')}` : '') +
    (options.forge ? '; a delivery forged' : '') +
    (interrupted.length ? `; ${interrupted.join('; ')}` : '') +
    (options.late
      ? `; ${released} held delivery(ies) released after it (${networkState.lateChanges.splice(0).join(', ') || 'no change'})`
      : '') +
    (besideLine ? `; beside it: ${besideLine}` : '')
  );
}

/**
 * While an export of `orderIds` of the accounts `identifiers` is held on its way, the service changes one of its
 * transactions: the last succeeded payment's result is revised (or, now and then, the last refundable one is refunded
 * in part). The export held is then older than the one recon asks for again, and arrives after it.
 */
function changeDuringTheNight(world: World, orderIds: readonly string[], identifiers: readonly string[]): string {
  const asked = new Set(orderIds);
  const paid = world.service
    .transactions()
    .filter(
      (t) =>
        asked.has(t.orderId) &&
        identifiers.includes(t.identifier) &&
        (t.operationType === 'payment' || t.operationType === 'capture') &&
        t.status === 'succeeded',
    )
    .at(-1);
  if (!paid) return 'nothing to change';
  const resting = paid.restingAmount ?? paid.amount;
  if (world.random.chance(0.3) && resting > 1n && world.service.refund(paid, resting / 2n, accountOf(world, paid))) {
    return `${paid.orderId} refunded ${resting / 2n} meanwhile`;
  }
  world.service.revise(paid.transactionId, '4001', 'Refused after review');
  return `${paid.transactionId} of ${paid.orderId} revised to 4001 meanwhile`;
}

/**
 * A prune while a run over all orders is in flight, forced rather than hoped for: the run, written in slices on two
 * connections, is held before its slices write (a lock on recon.verdicts taken first), the prune decides what is old
 * meanwhile and waits for its turn, then the run goes on and finishes before the prune's batches.
 */
async function pruneBesideRunInFlight(world: World, ledger: Ledger): Promise<string> {
  const { database, databaseUrl } = world;
  await sql`ANALYZE recon.orders`.execute(database.db);
  const holder = new pg.Client({ connectionString: databaseUrl, application_name: 'simulation-holder' });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE recon.verdicts IN SHARE MODE');
    // Every run finished so far is old to the prune.
    const cutoff = new Date();
    const run = reconcile(database, {
      scope: { kind: 'all' },
      asOf: world.sandbox.clock.now(),
      toleranceMinor: world.config.reconcile.toleranceMinor,
      graceHours: world.config.reconcile.graceHours,
      connections: 2,
      minOrdersPerSlice: 1,
      full: true,
    });
    run.catch(() => {});
    await waitForLockWaiter(world, (waiter) => waiter.relation === 'recon.verdicts');
    let pruned: string | undefined;
    const pruning = pruneBefore(world, ledger, cutoff).then(
      (line) => (pruned = line),
      (error: unknown) => (pruned = `failed: ${String(error)}`),
    );
    await waitForLockWaiter(
      world,
      (waiter) => waiter.query.includes('pg_advisory_xact_lock'),
      () => pruned,
    );
    await holder.query('ROLLBACK');
    const summary = await run;
    ledger.runsMade.set(summary.runId, cutoff);
    return `reconcile --all on two connections: run ${summary.runId}; a prune of every run before it beside it: ${await pruning}`;
  } finally {
    await holder.end().catch(() => {});
  }
}

/** Waits until a session of the database waits for a lock as `matches` says (a table it waits for, or its query). */
async function waitForLockWaiter(
  world: World,
  matches: (waiter: {
    readonly query: string;
    readonly relation: string | null;
    readonly applicationName: string;
  }) => boolean,
  gaveUp: () => string | undefined = () => undefined,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const ended = gaveUp();
    if (ended !== undefined) throw new Error(`what should wait ended first: ${ended}`);
    const { rows } = await sql<{
      query: string;
      relation: string | null;
      applicationName: string;
    }>`SELECT a.query, a.application_name AS "applicationName",
        (SELECT l.relation::regclass::text FROM pg_locks l
         WHERE l.pid = a.pid AND NOT l.granted AND l.locktype = 'relation' LIMIT 1) AS relation
      FROM pg_stat_activity a WHERE a.datname = current_database() AND a.wait_event_type = 'Lock'`.execute(
      world.database.db,
    );
    if (rows.some(matches)) return;
    await sleep(10);
  }
  throw new Error('no session came to wait for the lock within 30 s');
}

/**
 * A `recon worker` process of its own takes the night's jobs (this process's worker stops), and every ingest waits at
 * its merge for a lock the simulation holds; `killMidIngest` waits until the worker process is inside an ingest, at
 * its merge, kills it (SIGKILL), lets the rest go, and starts this process's worker again. What the dead worker held
 * is taken up again once its jobs' heartbeat lapses, and its temp folder removed as a worker starting removes a dead
 * process's leftovers.
 */
async function workerProcessHeldAtItsMerge(world: World): Promise<{ killMidIngest(): Promise<string> }> {
  await world.worker.stop();
  const holder = new pg.Client({ connectionString: world.databaseUrl, application_name: 'simulation-holder' });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query(`SELECT pg_advisory_xact_lock(${MERGE_LOCK})`);
  const child = spawn(process.execPath, [CLI, 'worker'], { env: world.workerProcessEnv, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => {});
  return {
    async killMidIngest() {
      try {
        await waitForLockWaiter(
          world,
          (waiter) => waiter.applicationName === 'simulation-worker' && waiter.query.includes('pg_advisory_xact_lock'),
        );
        child.kill('SIGKILL');
        await exited;
        return `a worker process killed in the middle of an ingest (pid ${child.pid})`;
      } finally {
        child.kill('SIGKILL');
        await holder.query('ROLLBACK').catch(() => {});
        await holder.end().catch(() => {});
        await world.worker.start();
        await removeStaleTempFolders(world.tempDir);
      }
    },
  };
}

/** This process's connections to PostgreSQL cut, new ones refused, for a moment in the middle of the night. */
async function cutConnections(world: World): Promise<string> {
  const connections = world.connections!;
  const after = world.random.int(0, 200);
  const lasting = world.random.int(50, 400);
  await sleep(after);
  await connections.cut();
  await sleep(lasting);
  await connections.restore();
  return `connections cut for ${lasting} ms`;
}
