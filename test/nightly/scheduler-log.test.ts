import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log/create-logger.ts';
import { startNightlyScheduler } from '../../src/nightly/nightly-scheduler.ts';
import { memoryStream } from '../log/memory-stream.ts';
import { parseLogRecords } from '../support/log-records.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * What node-cron says of the nightly schedule is a record of recon's log, never a line of its own on stderr: under a
 * loaded machine `recon serve` with a second-by-second schedule wrote node-cron's colored warnings there. The tick is
 * held, not hoped slow: its run's first advance waits until the test lets it go, so the next second's firing finds it
 * still running.
 */
describe.each(BACKENDS)("the nightly schedule's own warnings, on %s", (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)(
    'a firing held back by the one still running is a warning record, and nothing on stderr',
    async () => {
      const stream = memoryStream();
      const log = createLogger({ level: 'info', stream, name: 'recon serve' });
      const warned = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const errored = vi.spyOn(console, 'error').mockImplementation(() => {});
      const written = vi.spyOn(process.stderr, 'write');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const scheduler = startNightlyScheduler(testDb.database.db, {
        schedule: '* * * * * *',
        timezone: 'UTC',
        onRunCreated: () => held,
        onError: (error) => {
          throw error;
        },
        log,
      });
      try {
        const records = () => parseLogRecords(stream.text());
        await waitUntil('a firing held back', async () => records().some((record) => record.level === 'warn'));
        expect(records().find((record) => record.level === 'warn')).toMatchObject({
          name: 'recon serve',
          task: 'recon-nightly',
          msg: 'schedule: task still running, new execution blocked by overlap prevention!',
        });
        expect([...warned.mock.calls, ...errored.mock.calls, ...written.mock.calls]).toEqual([]);
      } finally {
        release();
        await scheduler.stop();
        warned.mockRestore();
        errored.mockRestore();
        written.mockRestore();
      }
    },
  );
});
