/**
 * CI's seeds of the simulator on one backend, a test file per backend (simulate-pglite.test.ts,
 * simulate-postgres.test.ts): the two halves were one file's 80 s that ran after everything else, on one core of two,
 * where as two files they run beside each other, each on a worker of its own.
 */
import { describe, expect, inject, it } from 'vitest';
import { runSimulation, type SimulationResult } from '../../simulation/run-simulation.ts';
import { type Backend, hasPostgres } from '../support/test-database.ts';

/** Fixed seeds, a few nights each: what CI holds the books to on every change. `npm run simulate` goes further. */
const SEEDS = [1, 2, 3];
const NIGHTS = 4;

function failureOf(result: SimulationResult): string | null {
  const failure = result.failure;
  return failure
    ? `seed ${result.seed}, step ${failure.step} (night ${failure.night}, ${failure.kind}): ${failure.message}; ` +
        `replay: npm run simulate -- --seed ${result.seed} --nights ${NIGHTS} --until-step ${failure.step}`
    : null;
}

export function describeSimulatorSeeds(backend: Backend): void {
  describe(`the simulator on ${backend}`, () => {
    const skip = backend === 'postgres' && !hasPostgres;
    const databaseUrl = backend === 'postgres' ? process.env.DATABASE_URL : undefined;
    // Each seed's database a copy of the run's migrated one, as every test database is: migrating anew took 7 s a
    // seed on PGlite.
    const template = { postgres: inject('postgresTemplate'), pglite: inject('pgliteTemplate') };

    it.skipIf(skip)(
      `holds every invariant of the books over ${NIGHTS} nights of seeds ${SEEDS.join(', ')}, and a seed gives one fingerprint`,
      async () => {
        const results: SimulationResult[] = [];
        for (const seed of SEEDS) results.push(await runSimulation({ seed, nights: NIGHTS, databaseUrl, template }));
        expect(results.map(failureOf)).toEqual(SEEDS.map(() => null));
        // The timing of a run differs (deliveries, retries, workers); its books do not.
        const again = await runSimulation({ seed: SEEDS[0]!, nights: NIGHTS, databaseUrl, template });
        expect(failureOf(again)).toBeNull();
        expect(again.fingerprint).toBe(results[0]!.fingerprint);
        expect(new Set(results.map((result) => result.fingerprint)).size).toBe(SEEDS.length);
      },
      600_000,
    );
  });
}
