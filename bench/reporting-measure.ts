import { selectToCopy, type ReportingQuery, type Samples } from './reporting-queries.ts';
import type { SqlSession } from './sql-session.ts';

/** A statement that runs away fails the benchmark rather than holding it: ten minutes is 600 times the target. */
const STATEMENT_TIMEOUT = '10min';

/**
 * Runs one query in a transaction of its own, always rolled back (a write leaves nothing), as its role when it has
 * one; only the query itself is timed, its rows read to the last. Returns seconds and rows.
 */
export async function timeQuery(
  session: SqlSession,
  query: Pick<ReportingQuery, 'sql' | 'before'> & { role?: string },
): Promise<{ seconds: number; rows: number }> {
  await session.query('BEGIN');
  try {
    await session.query(`SET LOCAL statement_timeout = '${STATEMENT_TIMEOUT}'`);
    if (query.role) await session.query(`SET LOCAL ROLE ${query.role}`);
    for (const statement of query.before) await session.query(statement);
    const select = selectToCopy(query.sql);
    const started = performance.now();
    const rows = select === null ? (await session.query(query.sql)).length : await session.countRows(select);
    return { seconds: (performance.now() - started) / 1000, rows };
  } finally {
    await session.query('ROLLBACK');
  }
}

/** What the benchmark's database holds, to know it is a whole history and to name it. */
export async function readHistory(session: SqlSession) {
  const rows = await session.query<{
    orders: string;
    finished: string;
    unfinished: string;
    version: string;
    user_name: string;
  }>(
    `SELECT (SELECT count(*) FROM recon.orders) AS orders,
            (SELECT count(*) FROM recon.reconciliation_runs WHERE finished_at IS NOT NULL) AS finished,
            (SELECT count(*) FROM recon.reconciliation_runs WHERE finished_at IS NULL) AS unfinished,
            current_setting('server_version') AS version, current_user AS user_name`,
  );
  const row = rows[0]!;
  return {
    orders: Number(row.orders),
    finishedRuns: Number(row.finished),
    unfinishedRuns: Number(row.unfinished),
    serverVersion: row.version,
    user: row.user_name,
  };
}

/**
 * The values the queries filter on, read from the latest run: its commonest exception status, currency and account
 * (the filters that keep the most rows), and an open exception of a known order, one whose verdict changed if any.
 */
export async function readSamples(session: SqlSession): Promise<Samples> {
  const one = async <T>(text: string, params: unknown[] = []) => {
    const rows = await session.query<{ value: T }>(text, params);
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
