import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { oneProcessPerExitCode, runReconInProcess, startRecon } from './run-recon.ts';

interface LogRecord {
  readonly level: string;
  readonly msg: string;
}

// recon runs is a process of its own once in this file, on whichever backend runs first, and runs in this one after:
// a process on PGlite opens its database from scratch, seconds of CPU for nothing its output depends on.
const runsOnce = oneProcessPerExitCode();

const SERVICE = { RECON_SERVICE_URL: 'http://127.0.0.1:9', RECON_IDENTIFIER: 'PROBE', RECON_SECRET: 'probe-secret' };

/** A mistyped RECON_CALLBACK_BASE_URL shows at serve's start, not as exports missing hours later. */
describe.each(BACKENDS)('recon serve probes its callback base at start, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await testDb.close();
  });
  afterAll(async () => testDb?.drop());

  /** Runs recon serve until a log record's message holds `said`; that record. */
  async function serveUntil(env: Record<string, string>, said: string): Promise<LogRecord> {
    const serve = startRecon(['serve'], { ...testDb.env, ...SERVICE, ...env });
    let found: LogRecord | undefined;
    serve.onStdoutLine((line) => {
      const record = JSON.parse(line) as LogRecord;
      if (record.msg.includes(said)) found ??= record;
    });
    try {
      await waitUntil(`recon serve to log '${said}'`, () => found !== undefined, { timeoutMs: 60_000 });
    } finally {
      serve.child.kill('SIGTERM');
    }
    const result = await serve.done;
    expect(result.code, result.stderr).toBe(0);
    return found!;
  }

  it.skipIf(skip)(
    'an unreachable base is an error at once, and recon runs shows it first',
    async () => {
      const { port } = await refusingBaseUrl();
      const { baseUrl: wrong } = await refusingBaseUrl(); // a typo in the port
      const record = await serveUntil(
        { RECON_PORT: String(port), RECON_CALLBACK_BASE_URL: `${wrong}/` },
        'does not reach',
      );
      expect(record.level).toBe('error');
      expect(record.msg).toMatch(
        new RegExp(
          `^callback base ${wrong}/ does not reach recon's receiver: cannot connect: .*ECONNREFUSED.*check RECON_CALLBACK_BASE_URL`,
        ),
      );
      const runs = await runsOnce(['runs'], testDb.env, 0);
      expect(runs.code).toBe(0);
      expect(runs.stdout).toMatch(
        new RegExp(
          `^callback base ${wrong}/ does not reach recon's receiver: cannot connect: .* \\(checked .+\\)\\nno nightly run yet\\n$`,
        ),
      );
    },
    120_000,
  );

  it.skipIf(skip)(
    'a base that leads to this serve is reachable, and recon runs stays quiet about it',
    async () => {
      const { baseUrl, port } = await refusingBaseUrl();
      const record = await serveUntil(
        { RECON_PORT: String(port), RECON_CALLBACK_BASE_URL: `${baseUrl}/` },
        "reaches recon's receiver",
      );
      expect(record).toMatchObject({ level: 'info', msg: `callback base ${baseUrl}/ reaches recon's receiver` });
      // recon runs was a process of its own in the test above: here it runs in this one.
      const runs = await runReconInProcess(['runs'], testDb.env);
      expect(runs.stdout).toBe('no nightly run yet\n');
    },
    120_000,
  );
});
