import { parseArgs } from 'node:util';
import { runSimulation, type SimulationResult } from './run-simulation.ts';

/**
 * `npm run simulate`: recon driven through a month of nights by one seed, or many seeds, checking every invariant of
 * the books after every step (simulation/invariants.ts).
 *
 *   npm run simulate -- --seed 7 --nights 30          one seed, each step printed
 *   npm run simulate -- --seeds 100 --nights 14        seeds 1 to 100, a table
 *   npm run simulate -- --seed 7 --nights 30 --until-step 183    a replay up to a failure
 *
 * PGlite by default; PostgreSQL with DATABASE_URL (a database of its own per seed). Exit 0 when every seed held, 1
 * otherwise, 2 for a usage error.
 */
const USAGE = 'usage: npm run simulate -- (--seed N | --seeds K [--first N]) [--nights N] [--until-step S] [--quiet]\n';

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        seed: { type: 'string' },
        seeds: { type: 'string' },
        first: { type: 'string' },
        nights: { type: 'string' },
        'until-step': { type: 'string' },
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
  try {
    if ((values.seed === undefined) === (values.seeds === undefined)) throw new Error('give --seed or --seeds');
    const first = whole(values.first, 'first', 1);
    seeds =
      values.seed !== undefined
        ? [whole(values.seed, 'seed')]
        : Array.from({ length: whole(values.seeds, 'seeds') }, (_, i) => first + i);
    nights = whole(values.nights, 'nights', values.seed !== undefined ? 30 : 14);
    untilStep = values['until-step'] === undefined ? undefined : whole(values['until-step'], 'until-step');
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const databaseUrl = process.env['DATABASE_URL'] || undefined;
  const single = seeds.length === 1;
  const results: SimulationResult[] = [];
  for (const seed of seeds) {
    const result = await runSimulation({
      seed,
      nights,
      untilStep,
      databaseUrl,
      ...(single && !values.quiet ? { onStep: (step, line) => process.stdout.write(`${step}. ${line}\n`) } : {}),
    });
    results.push(result);
    if (!single) process.stdout.write(`${row(result)}\n`);
    if (result.failure) printFailure(result, nights);
  }
  if (single) process.stdout.write(`${row(results[0]!)}\n`);
  else {
    const failed = results.filter((result) => result.failure).length;
    const seconds = results.reduce((sum, result) => sum + result.seconds, 0);
    process.stdout.write(
      `${results.length} seeds, ${nights} nights each, on ${databaseUrl ? 'PostgreSQL' : 'PGlite'}: ${failed} failed, ${seconds.toFixed(0)} s in all\n`,
    );
  }
  return results.some((result) => result.failure) ? 1 : 0;
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
