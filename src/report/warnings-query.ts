import { sql, type Kysely } from 'kysely';
import type { Schema, VerdictStatus } from '../db/schema.ts';
import type { VerdictWarnings } from './run-report.ts';
import { runVerdicts } from './run-verdicts.ts';

/**
 * The warnings on the run's verdicts, whatever their status: how many, and the first `limit` by order id. A warning
 * changes no status, so a matched order paid on the wrong account is in no list of exceptions: here it is. Both reads
 * go through the verdicts that carry warnings alone (their partial indexes, migration 0034), a few in a million.
 */
export async function loadVerdictWarnings(db: Kysely<Schema>, runId: string, limit: number): Promise<VerdictWarnings> {
  const withWarnings = async () =>
    db.selectFrom(await runVerdicts(db, runId)).where(sql<boolean>`v.warnings IS NOT NULL`);
  const [counts, listed] = await Promise.all([
    (await withWarnings())
      .select([
        sql<number>`count(*)::integer`.as('verdicts'),
        sql<number>`coalesce(sum(cardinality(v.warnings)), 0)::integer`.as('warnings'),
      ])
      .executeTakeFirstOrThrow(),
    sql<{
      order_id: string;
      status: VerdictStatus;
      currency: string | null;
      identifier: string | null;
      warning: string;
    }>`
      SELECT v.order_id, v.status, v.currency, w.warning,
        substring(w.warning FROM '^[^ ]+ [^ ]+ on account (.*), which does not serve [^ ]+$') AS identifier
      FROM ${await runVerdicts(db, runId)}
      CROSS JOIN LATERAL unnest(v.warnings) WITH ORDINALITY AS w (warning, position)
      WHERE v.warnings IS NOT NULL
      ORDER BY v.order_id, w.position
      LIMIT ${limit}`
      .execute(db)
      .then((result) => result.rows),
  ]);
  return {
    verdicts: counts.verdicts,
    warnings: counts.warnings,
    listed: listed.map((row) => ({
      orderId: row.order_id,
      status: row.status,
      currency: row.currency?.trim() ?? null,
      identifier: row.identifier,
      warning: row.warning,
    })),
  };
}
