import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { renderCsv } from '../../src/report/report-csv.ts';
import { renderHtml } from '../../src/report/report-html.ts';
import { renderJson } from '../../src/report/report-json.ts';
import { renderTable } from '../../src/report/report-table.ts';
import { bounded, CSV_CELL_MAX } from '../../src/report/untrusted-text.ts';
import { collect, GENERATED_AT, morningReport, openException, pages } from './morning-report-fixture.ts';

const RLO = '\u202E';
/** 100,000 characters, opening with a right-to-left override it never closes. */
const NOTE = `${RLO}${'n'.repeat(99_999)}`;
const NAME = `${RLO}mallory`;
const AT = new Date('2026-11-20T09:15:00Z');
const HANDLED = openException('ACK-1', {
  status: 'capture_expired',
  acknowledged: true,
  acknowledgedBy: NAME,
  acknowledgedLogin: 'alice',
  acknowledgedAt: AT,
  lastNote: NOTE,
  lastNoteBy: NAME,
  lastNoteLogin: 'alice',
  lastNoteAt: AT,
  // A reason longer than a spreadsheet cell holds.
  explanation: { rule: 'missing_at_provider', reason: 'r'.repeat(40_000), transactions: [], warnings: [] },
});
const SHOWN = `${RLO}${'n'.repeat(299)}… (100,000 characters)`;

/**
 * Text anybody may type (a note, a name, an order id, a reason) is bounded in every format, its length said, and in
 * html isolated, so that an override left open turns round nothing else of its line.
 */
describe('untrusted text in the report', () => {
  it('cuts a text at its first characters and says how long it was, never halving a surrogate pair', () => {
    expect(bounded('short', 300)).toBe('short');
    expect(bounded(NOTE, 300)).toBe(SHOWN);
    expect(bounded(`ab${'😀'.repeat(3)}`, 3)).toBe('ab… (8 characters)');
  });

  it('shows the first 300 characters of a 100 kB note in html, the note and the names each isolated', () => {
    const page = renderHtml(morningReport(), [HANDLED], { generatedAt: GENERATED_AT, perGroup: 10 });
    expect(page.length).toBeLessThan(100_000);
    expect(page).toContain(`“<bdi>${SHOWN}</bdi>”`);
    // The override stays within the name: the login and the instant after it are outside the isolate.
    expect(page).toContain(`acknowledged</span> by <bdi>${NAME}</bdi> (login <bdi>alice</bdi>), 2026-11-20 09:15 UTC`);
    expect(page).toContain(`— <bdi>${NAME}</bdi> (login <bdi>alice</bdi>), 2026-11-20 09:15 UTC`);
    expect(page).toContain('… (40,000 characters)</bdi></summary>');
  });

  it('bounds the note in csv, and no cell is longer than a spreadsheet holds', async () => {
    const csv = await collect(renderCsv(morningReport(), pages([HANDLED]), { generatedAt: GENERATED_AT }));
    const records: string[][] = parse(csv.slice(1), { relax_column_count: true, skip_empty_lines: true });
    const cells = records.flat();
    expect(Math.max(...cells.map((cell) => cell.length))).toBeLessThanOrEqual(CSV_CELL_MAX);
    const row = records.find((record) => record[0] === 'ACK-1')!;
    expect(row).toContain(SHOWN);
    expect(row).toContain(NAME);
    expect(row.find((cell) => cell.startsWith('rrr'))).toMatch(/^r+… \(40,000 characters\)$/);
  });

  it('bounds the note in the table, its overrides replaced', () => {
    const text = renderTable(morningReport(), [HANDLED], { generatedAt: GENERATED_AT });
    expect(text).not.toContain(RLO);
    expect(text).toContain(`\uFFFD${'n'.repeat(39)}… (100,000 characters)`);
    expect(text.length).toBeLessThan(20_000);
  });

  it('bounds the note in json and says its whole length', async () => {
    const json = JSON.parse(
      await collect(renderJson(morningReport(), pages([HANDLED]), { generatedAt: GENERATED_AT })),
    );
    expect(json.openExceptions.items[0]).toMatchObject({ lastNote: SHOWN, lastNoteLength: 100_000, lastNoteBy: NAME });
  });
});
