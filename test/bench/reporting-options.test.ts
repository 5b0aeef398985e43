import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PGLITE_DIR_NAME, reportingOptions } from '../../bench/reporting-options.ts';

const tmp = path.resolve('/tmp/bench');

describe("bench:reporting's options", () => {
  it("measure both of bench:history's databases by default, at its sizes, removed at the end", () => {
    expect(reportingOptions([], tmp)).toEqual({
      backends: ['postgres', 'pglite'],
      orders: 1_000_000,
      pgliteOrders: 100_000,
      database: 'recon_bench_history',
      keep: false,
      pgliteDir: undefined,
      json: false,
    });
  });

  it('measure one backend with --only, as bench:history', () => {
    expect(reportingOptions(['--only', 'pglite', '--pglite-orders', '20000'], tmp)).toMatchObject({
      backends: ['pglite'],
      pgliteOrders: 20_000,
    });
    expect(reportingOptions(['--only', 'postgres'], tmp).backends).toEqual(['postgres']);
    expect(() => reportingOptions(['--only', 'sqlite'], tmp)).toThrow(
      "--only must be postgres or pglite, got 'sqlite'",
    );
  });

  it('keep the PGlite history in a directory of its own name with --keep, or the one named', () => {
    expect(reportingOptions(['--keep'], tmp).pgliteDir).toBe(path.join(tmp, PGLITE_DIR_NAME));
    expect(reportingOptions(['--keep', '--pglite-dir', '/data/history'], tmp).pgliteDir).toBe(
      path.resolve('/data/history'),
    );
    expect(() => reportingOptions(['--pglite-dir', '/data/history'], tmp)).toThrow('pass --keep with it');
  });

  it('take positive sizes and a plain database name only', () => {
    expect(() => reportingOptions(['--pglite-orders', '0'], tmp)).toThrow(
      "--pglite-orders must be a positive integer, got '0'",
    );
    expect(() => reportingOptions(['--orders', '1.5'], tmp)).toThrow('--orders must be a positive integer');
    expect(() => reportingOptions(['--database', 'x; DROP'], tmp)).toThrow(
      '--database must be a lower-case identifier',
    );
    expect(() => reportingOptions(['--rows', '5'], tmp)).toThrow();
  });
});
