import { describe, expect, it } from 'vitest';
import { buildUpsertSql, canUpsertDirectly } from '../../src/load/upsert-sql.ts';

describe('buildUpsertSql', () => {
  it('direct form: reads the staged rows as they are, writes and compares only the columns of the file', () => {
    expect(buildUpsertSql({ columns: ['amount_minor', 'exec_code'], withExtra: false }, 'direct')).toBe(`WITH written AS (
  INSERT INTO recon.transactions AS t (transaction_id, amount_minor, exec_code, file_id, entry, line)
  SELECT transaction_id, amount_minor, exec_code, $1, ($2::text[])[entry_index + 1], line
  FROM recon_staging
  WHERE reject_reason IS NULL AND entry_index = ANY ($3::integer[])
  ON CONFLICT (transaction_id) DO UPDATE SET amount_minor = excluded.amount_minor, exec_code = excluded.exec_code, file_id = excluded.file_id, entry = excluded.entry, line = excluded.line, updated_at = now()
  WHERE (t.amount_minor, t.exec_code) IS DISTINCT FROM (excluded.amount_minor, excluded.exec_code)
  RETURNING t.xmax = 0 AS inserted
)
SELECT (count(*) FILTER (WHERE inserted))::integer AS inserted,
  (count(*) FILTER (WHERE NOT inserted))::integer AS updated
FROM written`);
  });

  it('deduplicating form: the last staged row per id wins and distinct ids are counted', () => {
    expect(buildUpsertSql({ columns: ['amount_minor', 'exec_code'], withExtra: false }, 'deduplicating')).toBe(`WITH latest AS (
  SELECT DISTINCT ON (transaction_id) transaction_id, amount_minor, exec_code, entry_index, line
  FROM recon_staging
  WHERE reject_reason IS NULL AND entry_index = ANY ($3::integer[])
  ORDER BY transaction_id, entry_index DESC, line DESC
), written AS (
  INSERT INTO recon.transactions AS t (transaction_id, amount_minor, exec_code, file_id, entry, line)
  SELECT transaction_id, amount_minor, exec_code, $1, ($2::text[])[entry_index + 1], line
  FROM latest
  ON CONFLICT (transaction_id) DO UPDATE SET amount_minor = excluded.amount_minor, exec_code = excluded.exec_code, file_id = excluded.file_id, entry = excluded.entry, line = excluded.line, updated_at = now()
  WHERE (t.amount_minor, t.exec_code) IS DISTINCT FROM (excluded.amount_minor, excluded.exec_code)
  RETURNING t.xmax = 0 AS inserted
)
SELECT (SELECT count(*) FROM latest)::integer AS distinct_rows,
  (count(*) FILTER (WHERE inserted))::integer AS inserted,
  (count(*) FILTER (WHERE NOT inserted))::integer AS updated
FROM written`);
  });

  it('tries the direct form only where a repeated id would be refused rather than skipped', () => {
    expect(canUpsertDirectly({ columns: ['currency'], withExtra: false })).toBe(true);
    expect(canUpsertDirectly({ columns: [], withExtra: true })).toBe(true);
    expect(canUpsertDirectly({ columns: [], withExtra: false })).toBe(false);
  });

  it('merges extra into the stored one and counts a new or changed key as a change', () => {
    const sql = buildUpsertSql({ columns: ['currency'], withExtra: true }, 'deduplicating');
    expect(sql).toContain("SELECT transaction_id, currency, coalesce(extra, '{}'), $1,");
    expect(sql).toContain('INSERT INTO recon.transactions AS t (transaction_id, currency, extra, file_id, entry, line)');
    expect(sql).toContain('DO UPDATE SET currency = excluded.currency, extra = t.extra || excluded.extra, file_id');
    expect(sql).toContain('WHERE (t.currency) IS DISTINCT FROM (excluded.currency) OR t.extra || excluded.extra <> t.extra');
  });

  it('leaves extra alone when the file has no unknown column', () => {
    const sql = buildUpsertSql({ columns: ['currency'], withExtra: false }, 'deduplicating');
    expect(sql).not.toContain('extra');
  });

  it('only inserts when the file carries nothing but transaction ids', () => {
    const sql = buildUpsertSql({ columns: [], withExtra: false }, 'deduplicating');
    expect(sql).toContain('ON CONFLICT (transaction_id) DO NOTHING');
    expect(sql).not.toContain('DO UPDATE');
  });

  it('compares on extra alone when the only other columns are unknown ones', () => {
    const sql = buildUpsertSql({ columns: [], withExtra: true }, 'deduplicating');
    expect(sql).toContain('DO UPDATE SET extra = t.extra || excluded.extra, file_id');
    expect(sql).toContain('WHERE t.extra || excluded.extra <> t.extra');
    expect(sql).not.toContain('IS DISTINCT FROM');
  });
});
