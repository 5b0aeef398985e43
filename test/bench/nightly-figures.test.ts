import { describe, expect, it } from 'vitest';
import {
  breakdown,
  cpuSecondsOfStat,
  joinExportCsvs,
  percentile,
  spread,
  type JobTimes,
} from '../../bench/nightly-figures.ts';

describe('percentile and spread', () => {
  it('take the nearest rank, whatever the order of the values', () => {
    const values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 95)).toBe(10);
    expect(percentile(values, 10)).toBe(1);
    expect(percentile([7], 95)).toBe(7);
    expect(spread(values)).toEqual({ n: 10, p50: 5, p95: 10, max: 10 });
  });

  it('are NaN for no values, never a number made up', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(spread([])).toMatchObject({ n: 0, p50: Number.NaN, max: Number.NaN });
  });
});

describe('breakdown', () => {
  const T = 1_000_000;
  const job = (created: number, started: number | null, completed: number | null): JobTimes => ({
    createdOn: T + created,
    startedOn: started === null ? null : T + started,
    completedOn: completed === null ? null : T + completed,
  });

  it("places the run's requests, deliveries, jobs and reconciliation in seconds from the run's start", () => {
    const figures = breakdown(
      { startedAt: T, finishedAt: T + 9_000, reconcileStartedAt: T + 8_000, reconcileFinishedAt: T + 8_900 },
      [
        { sentAt: T + 500, deliveredAt: T + 1_000, ingestedAt: T + 2_000 },
        { sentAt: T + 700, deliveredAt: T + 3_000, ingestedAt: T + 7_500 },
        // A request never answered: counted nowhere but where it was sent.
        { sentAt: T + 900, deliveredAt: null, ingestedAt: null },
      ],
      [job(1_000, 1_500, 2_000), job(3_000, 7_000, 7_500), job(3_100, null, null)],
      [job(0, 100, 600), job(7_500, 7_600, 8_900)],
    );
    expect(figures).toEqual({
      totalSeconds: 9,
      requestsSentBy: 0.9,
      firstDeliveryAt: 1,
      lastDeliveryAt: 3,
      lastIngestAt: 7.5,
      ingestJob: { n: 2, p50: 0.5, p95: 0.5, max: 0.5 },
      queueWait: { n: 2, p50: 0.5, p95: 4, max: 4 },
      advanceJob: { n: 2, p50: 0.5, p95: 1.3, max: 1.3, totalSeconds: 1.8 },
      reconcileSeconds: 0.9,
      lastIngestToReconcile: 0.5,
    });
  });
});

describe('joinExportCsvs', () => {
  it('keeps the first header once and every file’s rows in order, whatever their line endings and BOM', () => {
    const joined = joinExportCsvs([
      '\uFEFFTRANSACTIONID;ORDERID\r\nT1;O1\r\nT2;O1\r\n',
      'TRANSACTIONID;ORDERID\nT3;O2',
      'TRANSACTIONID;ORDERID\n',
      'TRANSACTIONID;ORDERID\nT4;O3\n',
    ]);
    expect(joined).toBe('TRANSACTIONID;ORDERID\r\nT1;O1\r\nT2;O1\r\nT3;O2\nT4;O3\n');
  });

  it('refuses files whose header differs from the first, naming which', () => {
    expect(() => joinExportCsvs(['A;B\n1;2\n', 'A;B\n3;4\n', 'A;C\n5;6\n'])).toThrow(
      /^export 3 has another header than the first: A;C$/,
    );
  });
});

describe('cpuSecondsOfStat', () => {
  it('adds utime and stime, in clock ticks, counting fields after the command name however it is written', () => {
    const rest = 'S 1 2 3 0 -1 4194560 1000 0 0 0 250 37 0 0 20 0 11 0 123 456 789';
    expect(cpuSecondsOfStat(`4242 (node) ${rest}`)).toBe(2.87);
    expect(cpuSecondsOfStat(`4242 (recon (serve) x) ${rest}`)).toBe(2.87);
  });
});
