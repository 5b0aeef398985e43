import type pg from 'pg';
import { to as copyToStdout } from 'pg-copy-streams';
import { copyStatement, type ReportingQuery, type Samples } from './reporting-queries.ts';

/** A statement that runs away fails the benchmark rather than holding it: ten minutes is 600 times the target. */
const STATEMENT_TIMEOUT = '10min';

/**
 * Runs one query in a transaction of its own, always rolled back (a write leaves nothing), as its role; only the
 * query itself is timed, its rows read to the last. Returns seconds and rows.
 */
export async function timeQuery(
  client: pg.Client,
  query: Pick<ReportingQuery, 'sql' | 'before'> & { role?: string },
): Promise<{ seconds: number; rows: number }> {
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL statement_timeout = '${STATEMENT_TIMEOUT}'`);
    if (query.role) await client.query(`SET LOCAL ROLE ${query.role}`);
    for (const statement of query.before) await client.query(statement);
    const copy = copyStatement(query.sql);
    const started = performance.now();
    const rows = copy === null ? ((await client.query(query.sql)).rowCount ?? 0) : await drain(client, copy);
    return { seconds: (performance.now() - started) / 1000, rows };
  } finally {
    await client.query('ROLLBACK');
  }
}

/** Reads a COPY ... TO STDOUT to its end, keeping nothing but the count of its lines: one a row. */
async function drain(client: pg.Client, copy: string): Promise<number> {
  let rows = 0;
  for await (const chunk of client.query(copyToStdout(copy)) as AsyncIterable<Buffer>) {
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) rows++;
  }
  return rows;
}

/** What the benchmark's database holds, to know it is a whole history and to name it. */
export async function readHistory(client: pg.Client) {
  const { rows } = await client.query<{ orders: string; finished: string; unfinished: string; version: string }>(
    `SELECT (SELECT count(*) FROM recon.orders) AS orders,
            (SELECT count(*) FROM recon.reconciliation_runs WHERE finished_at IS NOT NULL) AS finished,
            (SELECT count(*) FROM recon.reconciliation_runs WHERE finished_at IS NULL) AS unfinished,
            current_setting('server_version') AS version`,
  );
  const row = rows[0]!;
  return {
    orders: Number(row.orders),
    finishedRuns: Number(row.finished),
    unfinishedRuns: Number(row.unfinished),
    serverVersion: row.version,
  };
}

/**
 * The values the queries filter on, read from the latest run: its commonest exception status, currency and account
 * (the filters that keep the most rows), and an open exception of a known order, one whose verdict changed if any.
 */
export async function readSamples(client: pg.Client): Promise<Samples> {
  const one = async <T>(text: string, params: unknown[] = []) => {
    const { rows } = await client.query<{ value: T }>(text, params);
    if (rows.length === 0) throw new Error(`the database has no answer to: ${text.replace(/\s+/g, ' ')}`);
    return rows[0]!.value;
  };
  const runId = Number(
    await one<string>('SELECT max(run_id) AS value FROM recon.reconciliation_runs WHERE finished_at IS NOT NULL'),
  );
  const exceptionTotals = `FROM recon.run_status_totals WHERE run_id = $1 AND status NOT IN ('matched', 'pending')`;
  const status = await one<string>(
    `SELECT status AS value ${exceptionTotals} GROUP BY status ORDER BY sum(verdicts) DESC, status LIMIT 1`,
    [runId],
  );
  const currency = await one<string>(
    `SELECT currency AS value ${exceptionTotals} GROUP BY currency ORDER BY sum(verdicts) DESC, currency LIMIT 1`,
    [runId],
  );
  const identifier = await one<string>(
    `SELECT identifier AS value FROM recon.run_account_totals WHERE run_id = $1 AND identifier IS NOT NULL
     GROUP BY identifier ORDER BY sum(transactions) DESC, identifier LIMIT 1`,
    [runId],
  );
  const orderId = await one<string>(
    `SELECT v.order_id AS value FROM recon.verdicts v
     WHERE v.known_order AND v.status NOT IN ('matched', 'pending')
     ORDER BY EXISTS (SELECT 1 FROM recon.verdict_history h WHERE h.order_id = v.order_id) DESC, v.order_id
     LIMIT 1`,
  );
  return { runId, orderId, status, currency, identifier };
}
