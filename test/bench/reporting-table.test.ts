import { describe, expect, it } from 'vitest';
import {
  duration,
  reportingJson,
  reportingTable,
  type Measured,
  type ReportingFigures,
} from '../../bench/reporting-table.ts';

const query = (name: string, seconds: number[], rows: number): Measured => ({
  kind: 'question',
  name,
  command: 'SELECT 1',
  seconds,
  targetSeconds: 1,
  rows,
});

const figures: ReportingFigures = {
  backend: 'PostgreSQL',
  serverVersion: '15.20',
  database: 'recon_bench_history',
  runAs: "the accountants' roles",
  orders: 1_000_000,
  runs: 11,
  samples: { runId: 11, orderId: 'ORD-9', status: 'capture_expired', currency: 'EUR', identifier: 'MERCHANT01' },
  reference: { name: 'a scan', sql: 'SELECT 1', seconds: [0.3, 0.2] },
  measured: [
    query('fast', [0.004, 0.002], 1),
    query('slow', [1.6, 1.5], 52_000),
    {
      kind: 'report',
      name: 'recon report --format csv',
      command: 'recon report',
      seconds: [4, 5],
      targetSeconds: 10,
      bytes: 31_400_000,
      peakRssMb: 150.4,
    },
    { ...query('ack', [0.001, 0.003], 1), kind: 'docs', rolledBack: true },
  ],
};

describe('the reporting table', () => {
  const lines = reportingTable(figures).split('\n');
  const body = lines.slice(lines.findIndex((l) => l.includes('of target')) + 1, -1);

  it('lists the best of each, slowest first, with its target, both ratios and whether it met the target', () => {
    expect(
      body.map((l) =>
        l
          .split(/\s{2,}/)
          .map((cell) => cell.trim())
          .filter(Boolean),
      ),
    ).toEqual([
      ['4.00 s', '10 s', '0.40x', '20x', '✓', 'report', 'recon report --format csv', '31.4 MB, peak RSS 150 MB'],
      ['1.50 s', '1 s', '1.50x', '7.50x', '✗', 'question', 'slow', '52,000 rows'],
      ['2.00 ms', '1 s', '<0.01x', '0.01x', '✓', 'question', 'fast', '1 row'],
      ['1.00 ms', '1 s', '<0.01x', '<0.01x', '✓', 'docs', 'ack', '1 row, rolled back'],
    ]);
  });

  it('names the backend, its database and who the statements ran as', () => {
    expect(lines[0]).toMatch(
      /^reporting benchmark on PostgreSQL 15\.20: database recon_bench_history, 1,000,000 orders, 11 runs/,
    );
    expect(lines).toContain("statements run as the accountants' roles");
    const pglite = reportingTable({
      ...figures,
      backend: 'PGlite',
      serverVersion: '17.5',
      database: '/tmp/history',
      orders: 100_000,
      runAs: "PGlite's one user",
    }).split('\n');
    expect(pglite[0]).toMatch(
      /^reporting benchmark on PGlite \(PostgreSQL 17\.5\): data directory \/tmp\/history, 100,000 orders, 11 runs/,
    );
    expect(pglite).toContain("statements run as PGlite's one user");
  });

  it('says the reference, the rounds and how many missed', () => {
    expect(lines).toContain('reference: a scan, SELECT 1: 200 ms (best of 2)');
    expect(lines).toContain('each measure: best of 2; targets 1 s a query, 10 s a report');
    expect(lines.at(-1)).toBe('3 of 4 within target; 1 missed (✗)');
  });

  it('judges every measure in JSON too', () => {
    const json = reportingJson(figures) as { measured: Array<{ name: string; bestSeconds: number; met: boolean }> };
    expect(json.measured.map((m) => [m.name, m.bestSeconds, m.met])).toEqual([
      ['fast', 0.002, true],
      ['slow', 1.5, false],
      ['recon report --format csv', 4, true],
      ['ack', 0.001, true],
    ]);
  });
});

describe('durations', () => {
  it('keep three figures in the unit a reader thinks in', () => {
    expect([0.00042, 0.0123, 0.456, 1.234, 12.34].map(duration)).toEqual([
      '0.42 ms',
      '12.3 ms',
      '456 ms',
      '1.23 s',
      '12.3 s',
    ]);
  });
});
