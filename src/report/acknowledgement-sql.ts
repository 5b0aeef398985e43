import { sql } from 'kysely';

/**
 * Whether an exception of a run `run` was acknowledged, over its verdict `v`: the rule of reporting.exceptions
 * (migration 0023) applied to the run's verdict instead of the current one, with the actions taken before the run
 * finished. The latest ack or reopen of the order decides; an ack holds for the status and the exception (first seen
 * at the same instant) it was given for, while no version up to the run had another status. A report so reads the
 * same however late it is made: an exception acknowledged today shows apart in tonight's run's report.
 */
const cutoff = sql`coalesce(run.finished_at, run.started_at)`;

export const latestAckSql = sql`(SELECT a.action_id FROM recon.exception_actions a
  WHERE a.order_id = v.order_id AND a.action IN ('ack', 'reopen') AND a.acted_at <= ${cutoff}
  ORDER BY a.action_id DESC LIMIT 1)`;

export const acknowledgedSql = sql<boolean>`coalesce((SELECT a.action = 'ack' AND a.status = v.status
    AND a.first_seen IS NOT DISTINCT FROM v.first_seen_at
    AND NOT EXISTS (SELECT 1 FROM recon.verdict_versions h
      WHERE h.order_id = v.order_id AND h.run_id > a.run_id AND h.run_id <= run.run_id AND h.status <> a.status)
  FROM recon.exception_actions a WHERE a.action_id = ${latestAckSql}), false)`;

/** The latest note on the order before the run finished, of an ack, a note or a reopen, even of a lapsed ack. */
export const latestNoteSql = sql`(SELECT a.action_id FROM recon.exception_actions a
  WHERE a.order_id = v.order_id AND a.note IS NOT NULL AND a.acted_at <= ${cutoff}
  ORDER BY a.action_id DESC LIMIT 1)`;
