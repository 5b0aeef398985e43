import { describe, expect, it } from 'vitest';
import { trackDatabaseOutage } from '../../src/db/database-outage.ts';
import { withOutageLog } from '../../src/log/outage-logger.ts';
import { createLogger } from '../../src/log/create-logger.ts';
import { memoryStream } from '../log/memory-stream.ts';
import { parseLogRecords } from '../support/log-records.ts';
import { waitUntil } from '../support/wait-until.ts';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** An outage told in three parts, whatever the number of errors: its clock in hand, no database needed. */
describe('trackDatabaseOutage', () => {
  it('starts once, counts every 30 s while it lasts, and ends once, with how long and how many', () => {
    let clock = 0;
    const said: string[] = [];
    const outage = trackDatabaseOutage(
      {
        started: (error, source) => said.push(`started by ${source}: ${(error as Error).message}`),
        lasting: (seconds, errors) => said.push(`lasting ${seconds} s, ${errors} errors`),
        ended: (seconds, errors) => said.push(`ended after ${seconds} s, ${errors} errors`),
      },
      { now: () => clock },
    );
    // Not the outage's: the work failing is someone else's to say.
    expect(outage.failed(new Error('duplicate key'), 'a job')).toBe(false);
    expect(outage.ongoing).toBe(false);
    // Thirty errors from several parts over 65 s.
    for (let second = 0; second < 65; second += 2) {
      clock = second * 1000;
      expect(outage.failed(refused(), second === 0 ? 'job queue error' : 'worker presence not refreshed')).toBe(true);
    }
    clock = 66_000;
    outage.stillAway();
    outage.answered();
    outage.answered();
    expect(said).toEqual([
      'started by job queue error: connect ECONNREFUSED 127.0.0.1:5432',
      'lasting 30 s, 16 errors',
      'lasting 60 s, 31 errors',
      'ended after 66 s, 33 errors',
    ]);
    expect(outage.ongoing).toBe(false);
    // The next outage is a new one.
    outage.failed(refused(), 'sweep failed');
    expect(said.at(-1)).toBe('started by sweep failed: connect ECONNREFUSED 127.0.0.1:5432');
  });
});

describe('withOutageLog', () => {
  it('writes the first error as a warning with err {code, message}, counts the rest, and the probe ends it', async () => {
    const stream = memoryStream();
    let databaseBack = false;
    let probes = 0;
    const { log, stop } = withOutageLog(createLogger({ level: 'info', stream, name: 'recon worker' }), {
      probe: async () => {
        probes++;
        if (!databaseBack) throw refused();
      },
      probeEveryMs: 5,
    });
    try {
      const jobLog = log.child({ job: 'j1' });
      // pg-boss's plain copy of an error, its stack among the fields.
      log.error(
        { err: { code: 'ECONNRESET', message: 'read ECONNRESET', stack: 'Error\n at pg-pool' } },
        'job queue error',
      );
      for (let index = 0; index < 20; index++) jobLog.error({ err: refused() }, 'recon-delivery-ingest job failed');
      log.warn({ err: new Error('Connection terminated unexpectedly') }, 'worker presence not refreshed');
      // What is not the outage's passes as it is.
      jobLog.error({ err: new Error('delivery-3.csv: line 2: bad amount') }, 'delivery failed');
      log.info('resumed 0 delivery(ies)');
      await waitUntil('the probe tried', () => probes >= 2);
      databaseBack = true;
      await waitUntil('the end told', () => stream.text().includes('database is back'));
    } finally {
      stop();
    }
    const records = parseLogRecords(stream.text());
    expect(records.map((record) => [record.level, record.msg])).toEqual([
      ['warn', 'database unreachable: trying again until it is back'],
      ['error', 'delivery failed'],
      ['info', 'resumed 0 delivery(ies)'],
      ['info', expect.stringMatching(/^database is back after \d+ s \(22 error\(s\) while it was away\)$/)],
    ]);
    expect(records[0]).toMatchObject({
      err: { code: 'ECONNRESET', message: 'read ECONNRESET' },
      source: 'job queue error',
    });
    expect(stream.text()).not.toContain('pg-pool');
    expect(records[3]).toMatchObject({ errors: 22 });
  });
});
