import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_INSTALL_LOCK } from '../../src/queue/job-queue.ts';
import { holdTransaction } from '../support/held-transaction.ts';
import { closeServer, listenOnLoopback, refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { runRecon, runReconInProcess, startRecon } from './run-recon.ts';

const SERVICE = { RECON_SERVICE_URL: 'http://127.0.0.1:9', RECON_IDENTIFIER: 'START', RECON_SECRET: 'start-secret' };
/** Far more than a failed start takes (well under 2 s here): what the test tells apart is an exit from a hang. */
const EXITS_WITHIN_MS = 15_000;
/** The exit codes a real process of this file has exited with. */
const spawnedCodes = new Set<number>();
/** The backend whose failed starts are processes: the first to run. */
let processBackend: string | undefined;

/**
 * Runs `recon ARGS` that must fail with `code`. A start that fails after opening its database and listeners (`backend`
 * given) is a process on the backend that runs first: that it exits shows it closed them; a refusal made before is
 * one for each exit code. The others run in this process (PGlite's open alone is seconds of CPU a process), and must
 * leave no more TCP sockets and listeners open than they found.
 */
async function failing(args: string[], env: Record<string, string | undefined>, code: number, backend?: string) {
  if (backend === undefined ? !spawnedCodes.has(code) : (processBackend ??= backend) === backend) {
    spawnedCodes.add(code);
    return runRecon(args, env);
  }
  const before = openSockets();
  const result = await runReconInProcess(args, env);
  // No more than it found: one of an earlier test may still be closing as it starts.
  await waitUntil(`recon ${args[0]} to close its sockets and listeners`, () => openSockets() <= before);
  return result;
}

/** This process's open TCP sockets and listeners, as node counts them. */
const openSockets = () =>
  process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap' || name === 'TCPServerWrap').length;

/**
 * A long-running command that cannot start says why in one line and exits, leaving nothing running (see `failing`).
 */
describe.each(BACKENDS)('recon serve that cannot start, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await testDb.close();
    // As deployed: `recon migrate` has prepared the database (its grants, and the one line about PUBLIC's CONNECT
    // that a first start would otherwise log), so what a failed start prints is its own.
    expect((await runReconInProcess(['migrate'], testDb.env)).code).toBe(0);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)(
    'on a port in use: exit 1 and one line, at once',
    async () => {
      const occupant = createServer();
      const url = await listenOnLoopback(occupant);
      const port = new URL(url).port;
      try {
        const started = Date.now();
        const result = await failing(
          ['serve'],
          {
            ...testDb.env,
            ...SERVICE,
            RECON_PORT: port,
            RECON_CALLBACK_BASE_URL: `${url}/`,
          },
          1,
          backend,
        );
        expect(Date.now() - started).toBeLessThan(EXITS_WITHIN_MS);
        expect(result).toEqual({
          code: 1,
          stdout: '',
          stderr:
            `recon serve: cannot listen on 127.0.0.1:${port} (RECON_PORT): listen EADDRINUSE: address already in use ` +
            `127.0.0.1:${port}: another process listens there: stop it, or set RECON_PORT (or --port) to a free port\n`,
        });
      } finally {
        await closeServer(occupant);
      }
    },
    60_000,
  );

  it.skipIf(skip)(
    'on an admin port in use: exit 1 and one line naming RECON_ADMIN_PORT, recon serve and recon worker alike',
    async () => {
      const occupant = createServer();
      const url = await listenOnLoopback(occupant);
      const port = new URL(url).port;
      try {
        for (const command of ['serve', 'worker']) {
          const result = await failing(
            [command],
            {
              ...testDb.env,
              ...SERVICE,
              RECON_PORT: '0',
              RECON_ADMIN_PORT: port,
              RECON_CALLBACK_BASE_URL: 'http://127.0.0.1:9/',
            },
            1,
            backend,
          );
          expect(result).toEqual({
            code: 1,
            stdout: '',
            stderr:
              `recon ${command}: admin listener: cannot listen on 127.0.0.1:${port} (RECON_ADMIN_PORT): listen ` +
              `EADDRINUSE: address already in use 127.0.0.1:${port}: another process listens there: stop it, or set ` +
              'RECON_ADMIN_PORT to a free port\n',
          });
        }
      } finally {
        await closeServer(occupant);
      }
    },
    60_000,
  );
});

describe('recon serve with RECON_ADMIN_PORT equal to its own port', () => {
  it('exit 1 and one line saying the two are the same, before opening anything', async () => {
    const { baseUrl, port } = await refusingBaseUrl();
    const env = {
      RECON_DATA_DIR: '/nonexistent/recon-same-port',
      ...SERVICE,
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
      RECON_ADMIN_PORT: String(port),
    };
    expect(await failing(['serve'], { ...env, RECON_PORT: String(port) }, 1)).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `recon serve: RECON_ADMIN_PORT and RECON_PORT are the same port, ${port}: the admin listener and the receiver ` +
        'need one each: set RECON_ADMIN_PORT to another port (8091 unless set)\n',
    });
    expect((await failing(['serve', '--port', String(port)], env, 1)).stderr).toMatch(
      /^recon serve: RECON_ADMIN_PORT and --port are the same port, \d+: /,
    );
  });
});

describe('recon serve and recon worker without their database', () => {
  it('exit 2 in one line when the database refuses connections', async () => {
    const { baseUrl, port } = await refusingBaseUrl();
    for (const command of ['serve', 'worker']) {
      const result = await failing(
        [command],
        {
          DATABASE_URL: `postgres://recon@127.0.0.1:${port}/recon`,
          ...SERVICE,
          RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
          RECON_PORT: '0',
        },
        2,
      );
      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr:
          `recon ${command}: cannot connect to PostgreSQL: connect ECONNREFUSED 127.0.0.1:${port}: check that the ` +
          'server DATABASE_URL names is up and takes connections\n',
      });
    }
  });

  it('exit 1 naming the variable when DATABASE_URL is malformed', async () => {
    for (const command of ['serve', 'worker', 'nightly', 'ingest']) {
      const args = [command, ...(command === 'ingest' ? ['x.csv'] : [])];
      const result = await failing(
        args,
        { DATABASE_URL: 'localhost:5432/recon', ...SERVICE, RECON_CALLBACK_BASE_URL: 'http://127.0.0.1:9/' },
        1,
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `recon ${command}: invalid environment variable DATABASE_URL: expected a PostgreSQL connection string, postgres://user@host:port/database\n`,
      );
    }
  });
});

/**
 * The first SIGTERM stops a start that is stuck where it cannot see the signal: here it waits for the job queue's
 * install lock, which the test holds (PostgreSQL only: the lock is the server's).
 */
describe.skipIf(!hasPostgres)('a stuck start and SIGTERM (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
  });
  afterAll(async () => testDb?.drop());

  it('ends within RECON_DRAIN_SECONDS of the first signal, saying so', async () => {
    const held = await holdTransaction(testDb.env.DATABASE_URL!, [
      `SELECT pg_advisory_xact_lock(${QUEUE_INSTALL_LOCK})`,
    ]);
    try {
      const { baseUrl, port } = await refusingBaseUrl();
      const recon = startRecon(['serve'], {
        ...testDb.env,
        ...SERVICE,
        RECON_PORT: String(port),
        RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
        RECON_DRAIN_SECONDS: '1',
      });
      await waitUntil('recon serve waiting for the queue lock', async () => {
        const { rows } = await testDb.database.rawQuery<{ waiting: number }>(
          "SELECT count(*)::integer AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        return rows[0]!.waiting > 0;
      });
      const signalled = Date.now();
      recon.child.kill('SIGTERM');
      const result = await recon.done;
      expect(Date.now() - signalled).toBeLessThan(EXITS_WITHIN_MS);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe('recon: still running 3 s after SIGTERM, exiting\n');
    } finally {
      await held.release();
    }
  }, 60_000);
});
