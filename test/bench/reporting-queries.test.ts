import { describe, expect, it } from 'vitest';
import {
  blockName,
  selectToCopy,
  docsQueries,
  exampleValuesLeft,
  literal,
  substituteExamples,
  type Samples,
} from '../../bench/reporting-queries.ts';
import { reportingQuestions } from '../../bench/reporting-questions.ts';
import { reportingSqlBlocks } from '../docs/reporting-sql.ts';

const samples: Samples = {
  runId: 11,
  orderId: 'ORD-0000000009',
  status: 'capture_expired',
  currency: 'EUR',
  identifier: 'MERCHANT01',
};

describe("the page's examples on the benchmark's database", () => {
  it('compare run ids with the latest run and name the sample order', () => {
    const text = `SELECT 1 FROM reporting.run_orders o JOIN reporting.run_totals t ON t.run_id = o.run_id
WHERE o.run_id = 1 AND t.run_id = 12 AND run_id = 1 AND order_id IN ('ORD-1-0007', 'UNK-0')
AND run_id = (SELECT max(run_id) FROM reporting.runs) AND day >= DATE '2026-11-01'`;
    expect(substituteExamples(text, samples))
      .toBe(`SELECT 1 FROM reporting.run_orders o JOIN reporting.run_totals t ON t.run_id = o.run_id
WHERE o.run_id = 11 AND t.run_id = 11 AND run_id = 11 AND order_id IN ('ORD-0000000009', 'ORD-0000000009')
AND run_id = (SELECT max(run_id) FROM reporting.runs) AND day >= DATE '2026-11-01'`);
    expect(substituteExamples("reporting.exception_action(order_id => 'UNK-0', action => 'note')", samples)).toBe(
      "reporting.exception_action(order_id => 'ORD-0000000009', action => 'note')",
    );
  });

  it('tells what the substitution left of the examples', () => {
    expect(exampleValuesLeft("WHERE run_id = 11 AND order_id = 'ORD-0000000009'", samples)).toEqual([]);
    expect(exampleValuesLeft("WHERE run_id = 2 AND order_id = 'UNK-0'", samples)).toEqual([
      'run_id = 2',
      "order_id = 'UNK-0'",
      "'UNK-0'",
    ]);
    expect(
      exampleValuesLeft(
        "WHERE run_id IN (1, 11) AND order_id IN ('A-1') OR order_id='it''s' OR reporting.exception_action('B-2', 'ack')",
        samples,
      ),
    ).toEqual(['run_id IN (1', "order_id IN ('A-1'", "order_id='it''s'", "exception_action('B-2'"]);
  });

  it('leave nothing of the examples in any block of docs/reporting.md, and change some', () => {
    const blocks = reportingSqlBlocks();
    const queries = docsQueries(blocks, samples);
    expect(queries.map((q) => exampleValuesLeft(q.sql, samples)).flat()).toEqual([]);
    const changed = queries.filter((q, i) => q.sql !== blocks[i]!.text);
    expect(changed.some((q) => q.sql.includes('run_id = 11'))).toBe(true);
    expect(changed.some((q) => q.sql.includes("'ORD-0000000009'"))).toBe(true);
  });

  it('are named by line and by the view or action they read', () => {
    expect(blockName({ line: 44, text: 'SELECT run_id\nFROM reporting.runs\nORDER BY run_id;' })).toBe(
      'reporting.md:44 reporting.runs',
    );
    expect(blockName({ line: 9, text: "SELECT reporting.exception_action('UNK-0', 'reopen', 'bounced');" })).toBe(
      'reporting.md:9 exception_action reopen',
    );
    expect(blockName({ line: 3, text: "SET recon.report_timezone = 'Europe/Paris';" })).toBe(
      "reporting.md:3 SET recon.report_timezone = 'Europe/Paris';",
    );
  });

  it('act on an exception as the accountant, a reopen after an acknowledgement of its own', () => {
    const [read, ack, reopen] = docsQueries(
      [
        { language: 'sql', line: 1, text: 'SELECT * FROM reporting.exceptions;' },
        { language: 'sql', line: 2, text: "SELECT reporting.exception_action('UNK-0', 'ack', 'done');" },
        { language: 'sql', line: 3, text: "SELECT reporting.exception_action('UNK-0', 'reopen', 'bounced');" },
      ],
      samples,
    );
    expect(read).toMatchObject({ role: 'recon_reader', writes: false, before: [] });
    expect(ack).toMatchObject({ role: 'recon_accountant', writes: true, before: [] });
    expect(reopen).toMatchObject({ role: 'recon_accountant', writes: true });
    expect(reopen!.before).toEqual([
      expect.stringMatching(/^SELECT reporting\.exception_action\('ORD-0000000009', 'ack', /),
    ]);
  });
});

describe('the statements read through COPY', () => {
  it('are single SELECT or WITH statements, without their semicolon', () => {
    expect(selectToCopy('SELECT 1\nFROM x;\n')).toBe('SELECT 1\nFROM x');
    expect(selectToCopy('  with a AS (SELECT 1) SELECT * FROM a')).toBe('with a AS (SELECT 1) SELECT * FROM a');
    expect(selectToCopy("SET recon.report_timezone = 'Europe/Paris';")).toBeNull();
    expect(selectToCopy('SELECT 1; SELECT 2;')).toBeNull();
  });
});

describe("the accountants' questions", () => {
  it('are 25 to 35 SELECTs of their own name, read through COPY, as the readers', () => {
    const questions = reportingQuestions(samples);
    expect(questions.length).toBeGreaterThanOrEqual(25);
    expect(questions.length).toBeLessThanOrEqual(35);
    expect(new Set(questions.map((q) => q.name)).size).toBe(questions.length);
    expect(questions.filter((q) => selectToCopy(q.sql) === null)).toEqual([]);
    expect(questions.filter((q) => q.role !== 'recon_reader' || q.writes)).toEqual([]);
  });

  it('hold their values as SQL literals, quotes doubled', () => {
    expect(literal("O'Brien")).toBe("'O''Brien'");
    const questions = reportingQuestions({ ...samples, identifier: "shop's account" });
    expect(questions.some((q) => q.sql.includes("t.identifier = 'shop''s account'"))).toBe(true);
    expect(questions.some((q) => q.sql.includes("status = 'capture_expired'"))).toBe(true);
    expect(questions.some((q) => q.sql.includes('run_id = 11'))).toBe(true);
  });
});
