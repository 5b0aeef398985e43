/**
 * What bench:history measures of the database between recon's commands. Nothing here names a table of recon:
 * storage is every table of the schema, whatever the schema holds.
 */
import type { SqlSession } from './sql-session.ts';

/** Bytes on disk of every table of schema recon, with its indexes and TOAST, by table. */
export async function reconStorage(session: SqlSession): Promise<Map<string, number>> {
  // Written out first, so that the sizes are those of the files, not of dirty buffers still to be written.
  await session.query('CHECKPOINT');
  const rows = await session.query<{ name: string; bytes: string | number }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'recon' AND c.relkind IN ('r', 'm', 'p')`,
  );
  return new Map(rows.map((row) => [row.name, Number(row.bytes)]));
}

export const totalBytes = (sizes: ReadonlyMap<string, number>) => [...sizes.values()].reduce((sum, n) => sum + n, 0);

/** The tables that grew most between two readings, largest first: where a run's bytes went. */
export function grownTables(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  top = 3,
): Array<{ name: string; bytes: number }> {
  return [...after]
    .map(([name, bytes]) => ({ name, bytes: bytes - (before.get(name) ?? 0) }))
    .filter((t) => t.bytes !== 0)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

export interface TimedQuery {
  name: string;
  sql: string;
  params?: unknown[];
}

/**
 * Times each query at least `times` times in turn and keeps the median of each, in milliseconds. A query of a few
 * milliseconds is timed again until its samples add up to a quarter of a second (at most 25 of them): three samples of
 * 2 ms differ by a fifth from one another, which no ratio can be read through.
 */
export async function medianQueryMs(
  session: SqlSession,
  queries: readonly TimedQuery[],
  times = 3,
): Promise<Map<string, number>> {
  const timings = new Map<string, number[]>(queries.map((q) => [q.name, []]));
  const timeOnce = async (query: TimedQuery) => {
    const started = performance.now();
    await session.query(query.sql, query.params);
    timings.get(query.name)!.push(performance.now() - started);
  };
  for (let i = 0; i < times; i++) for (const query of queries) await timeOnce(query);
  for (const query of queries) {
    const samples = timings.get(query.name)!;
    while (samples.length < MAX_SAMPLES && samples.reduce((sum, ms) => sum + ms, 0) < ENOUGH_MS) await timeOnce(query);
  }
  return new Map([...timings].map(([name, ms]) => [name, median(ms)]));
}

const ENOUGH_MS = 250;
const MAX_SAMPLES = 25;

export const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
