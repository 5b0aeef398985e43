import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { runSimulation, type SimulationResult } from './run-simulation.ts';

/**
 * `npm run simulate`: recon driven through a month of nights by one seed, or many seeds, checking every invariant of
 * the books after every step (simulation/invariants.ts).
 *
 *   npm run simulate -- --seed 7 --nights 30          one seed, each step printed
 *   npm run simulate -- --seeds 100 --nights 14        seeds 1 to 100, a table (as many at once as --jobs)
 *   npm run simulate -- --seed 7 --nights 30 --until-step 183    a replay up to a failure
 *
 * PGlite by default; PostgreSQL with DATABASE_URL (a database of its own per seed). Several seeds run in child
 * processes, --jobs at once (twice the cores by default): a seed's world points TMPDIR at its own folder, which is per
 * process. Exit 0 when every seed held, 1 otherwise, 2 for a usage error.
 */
const USAGE =
  'usage: npm run simulate -- (--seed N | --seeds K [--first N] [--jobs J]) [--nights N] [--until-step S] [--quiet]\n';

async function main(): Promise<number> {
  const started = performance.now();
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        seed: { type: 'string' },
        seeds: { type: 'string' },
        first: { type: 'string' },
        nights: { type: 'string' },
        'until-step': { type: 'string' },
        jobs: { type: 'string' },
        'child-of-simulate': { type: 'boolean' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const whole = (text: string | undefined, name: string, fallback?: number): number => {
    if (text === undefined && fallback !== undefined) return fallback;
    if (text === undefined || !/^\d+$/.test(text)) throw new Error(`--${name} takes a whole number`);
    return Number(text);
  };
  let seeds: number[];
  let nights: number;
  let untilStep: number | undefined;
  let jobs: number;
  try {
    if ((values.seed === undefined) === (values.seeds === undefined)) throw new Error('give --seed or --seeds');
    const first = whole(values.first, 'first', 1);
    seeds =
      values.seed !== undefined
        ? [whole(values.seed, 'seed')]
        : Array.from({ length: whole(values.seeds, 'seeds') }, (_, i) => first + i);
    nights = whole(values.nights, 'nights', values.seed !== undefined ? 30 : 14);
    untilStep = values['until-step'] === undefined ? undefined : whole(values['until-step'], 'until-step');
    // A seed waits on loopback HTTP, its job queue's polling and its exports' timeouts about half of its time: two a
    // core keep the cores busy (four on two cores: 8 seeds in 195 s, where two at once took 34 s a seed).
    jobs = Math.max(1, Math.min(seeds.length, whole(values.jobs, 'jobs', 2 * availableParallelism())));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const databaseUrl = process.env['DATABASE_URL'] || undefined;
  const single = seeds.length === 1;
  if (values['child-of-simulate']) return serveParent(nights, untilStep, databaseUrl);
  const results: SimulationResult[] = [];
  const report = (result: SimulationResult) => {
    results.push(result);
    if (!single) process.stdout.write(`${row(result)}\n`);
    if (result.failure) printFailure(result, nights);
  };
  if (jobs > 1) await runInChildren(seeds, jobs, nights, untilStep, report);
  else
    for (const seed of seeds)
      report(
        await runSimulation({
          seed,
          nights,
          untilStep,
          databaseUrl,
          ...(single && !values.quiet ? { onStep: (step, line) => process.stdout.write(`${step}. ${line}\n`) } : {}),
        }),
      );
  if (single) process.stdout.write(`${row(results[0]!)}\n`);
  else {
    const failed = results.filter((result) => result.failure).length;
    const seconds = results.reduce((sum, result) => sum + result.seconds, 0);
    const wall = (performance.now() - started) / 1000;
    process.stdout.write(
      `${results.length} seeds, ${nights} nights each, on ${databaseUrl ? 'PostgreSQL' : 'PGlite'}: ${failed} failed, ${seconds.toFixed(0)} s of seeds in ${wall.toFixed(0)} s (${jobs} at once)\n`,
    );
  }
  return results.some((result) => result.failure) ? 1 : 0;
}

/**
 * Seeds handed to `jobs` children one at a time, the next to whichever finishes first; results are reported as they
 * come. A child that dies mid-seed fails that seed (and the run) rather than hanging it.
 */
async function runInChildren(
  seeds: readonly number[],
  jobs: number,
  nights: number,
  untilStep: number | undefined,
  report: (result: SimulationResult) => void,
): Promise<void> {
  const queue = [...seeds];
  const args = ['--child-of-simulate', '--seed', '0', '--nights', String(nights)];
  if (untilStep !== undefined) args.push('--until-step', String(untilStep));
  const child = () =>
    new Promise<void>((resolve) => {
      const worker = fork(import.meta.filename, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      let current: number | undefined;
      const next = () => {
        current = queue.shift();
        if (current === undefined) worker.disconnect();
        else worker.send(current);
      };
      worker.on('message', (result: SimulationResult) => {
        report(result);
        next();
      });
      worker.on('error', () => {});
      worker.on('exit', (code, signal) => {
        if (current !== undefined)
          report({
            seed: current,
            nights,
            steps: 0,
            seconds: 0,
            fingerprint: null,
            failure: {
              step: 0,
              night: 0,
              kind: 'child process',
              did: null,
              invariant: 'the simulation runs',
              message: `the child running it exited (${signal ?? `code ${code}`})`,
            },
          });
        resolve();
      });
      next();
    });
  await Promise.all(Array.from({ length: jobs }, child));
}

/** A child: runs each seed the parent sends and answers with its result, until the parent disconnects. */
function serveParent(nights: number, untilStep: number | undefined, databaseUrl: string | undefined): Promise<number> {
  return new Promise((resolve) => {
    let work = Promise.resolve();
    process.on('message', (seed: number) => {
      work = work
        .then(async () => {
          process.send!(await runSimulation({ seed, nights, untilStep, databaseUrl }));
        })
        .catch((error: unknown) => {
          process.stderr.write(`simulate: seed ${seed}: ${error instanceof Error ? error.message : String(error)}\n`);
          process.exit(1);
        });
    });
    process.on('disconnect', () => void work.then(() => resolve(0)));
  });
}

function row(result: SimulationResult): string {
  const outcome = result.failure
    ? `FAILED at step ${result.failure.step} (night ${result.failure.night}, ${result.failure.kind})`
    : `ok, fingerprint ${result.fingerprint}`;
  return `seed ${String(result.seed).padStart(5)}  ${String(result.steps).padStart(4)} steps  ${result.seconds.toFixed(1).padStart(6)} s  ${outcome}`;
}

function printFailure(result: SimulationResult, nights: number): void {
  const failure = result.failure!;
  process.stderr.write(
    `seed ${result.seed}, step ${failure.step} (night ${failure.night}, ${failure.kind}${failure.did ? `: ${failure.did}` : ''})\n` +
      `  ${failure.message}\n` +
      `  replay: npm run simulate -- --seed ${result.seed} --nights ${nights} --until-step ${failure.step}\n`,
  );
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`simulate: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
