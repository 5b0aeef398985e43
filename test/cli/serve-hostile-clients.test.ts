import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schema } from '../../src/db/schema.ts';
import { encodeNotification } from '@recon/protocol';
import { issueExportToken } from '../../src/receive/export-token.ts';
import { multipart, send } from '../receive/receiver-harness.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { listeningUrls, startRecon, type RunningRecon } from './run-recon.ts';

const SECRET = 'hostile-secret';
const GZIP = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.alloc(2000, 7)]);
/** The descriptor limit recon serve runs under here: below what the attacks below would take without bounds. */
const MAX_OPEN_FILES = 256;
/** Longer than any test may run. */
const NEVER_MS = 3_600_000;

/**
 * recon serve as an outsider attacks it: a real process, under a low descriptor limit, with real sockets. PostgreSQL
 * only: the test issues tokens in the database while the process serves them.
 */
describe.skipIf(!hasPostgres)('recon serve against hostile clients (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let db: Kysely<Schema>;
  let recon: RunningRecon;
  let url: string;
  let port: number;
  let adminUrl: string;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    db = testDb.database.db;
    ({ baseUrl: url, port } = await refusingBaseUrl());
    recon = startRecon(
      ['serve'],
      {
        ...testDb.env,
        RECON_SERVICE_URL: (await refusingBaseUrl()).baseUrl,
        RECON_IDENTIFIER: 'HOSTILE',
        RECON_SECRET: SECRET,
        RECON_PORT: String(port),
        RECON_CALLBACK_BASE_URL: `${url}/`,
        RECON_MAX_CONNECTIONS: '150',
        RECON_MAX_CONNECTIONS_PER_CLIENT: '50',
        // Nothing is cut for its pace here: what stalled uploads hold is looked at while they stall, however long
        // that takes. The cutting is the next suite's, with its timeouts set low.
        RECON_SLOW_UPLOAD_WINDOW_MS: String(NEVER_MS),
      },
      { maxOpenFiles: MAX_OPEN_FILES },
    );
    ({ adminUrl } = await listeningUrls(recon));
  });
  afterAll(async () => {
    if (recon) {
      recon.child.kill('SIGTERM');
      const result = await recon.done;
      // Still the same process at the end, and it drains as usual.
      expect(result.code).toBe(0);
    }
    await testDb?.drop();
  });

  const issue = async () =>
    issueExportToken(db, {
      callbackBaseUrl: `${url}/`,
      orderIds: ['HOSTILE-ORDER'],
      compression: 'gzip',
      nightlyRunId: null,
      expiresAt: new Date(Date.now() + 3_600_000),
    });

  /** The process is up and serves every entry point: health (on the admin listener), a notification, a delivery. */
  async function servesEverything(): Promise<void> {
    expect(recon.child.exitCode).toBeNull();
    expect(await send(`${adminUrl}/healthz`, { method: 'GET' })).toMatchObject({ status: 200, text: 'OK' });
    const notification = encodeNotification(
      {
        IDENTIFIER: 'HOSTILE',
        TRANSACTIONID: 'T-HOSTILE',
        ORDERID: 'HOSTILE-ORDER',
        OPERATIONTYPE: 'payment',
        EXECCODE: '0000',
      },
      SECRET,
    );
    expect(await send(`${url}/notify?${notification}`, { method: 'GET' })).toMatchObject({ status: 200, text: 'OK' });
    const issued = await issue();
    expect(
      await send(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' }, body: GZIP }),
    ).toMatchObject({ status: 200, text: 'OK' });
  }

  it('survives clients that reset their connection before their body is read, on every entry point', async () => {
    const valid = await issue();
    const form = multipart([{ name: 'file', value: Buffer.alloc(50_000, 1), filename: 'x.gz' }]);
    const targets = [
      { path: '/UNKNOWNTOKEN', type: 'application/octet-stream', body: Buffer.alloc(50_000, 1) },
      { path: new URL(valid.callbackUrl).pathname, type: 'application/gzip', body: Buffer.alloc(50_000, 1) },
      { path: '/UNKNOWNTOKEN', type: form.contentType, body: form.body },
      { path: new URL(valid.callbackUrl).pathname, type: form.contentType, body: form.body },
      { path: '/notify', type: 'application/x-www-form-urlencoded', body: Buffer.from('A=1&'.repeat(5000)) },
    ];
    for (let round = 0; round < 8; round++) {
      expect(recon.child.exitCode, recon.stderrSoFar()).toBeNull();
      // At once, while recon looks the token up; and once it has answered (a refusal) and reads out the rest.
      for (const target of targets) await resetMidBody(port, target.path, target.type, target.body, 'at once');
      for (const target of targets) await resetMidBody(port, target.path, target.type, target.body, 'after the answer');
    }
    await servesEverything();
    // The token whose uploads were cut still takes its delivery.
    expect(
      await send(valid.callbackUrl, { headers: { 'content-type': 'application/gzip' }, body: GZIP }),
    ).toMatchObject({ status: 200 });
  });

  it('keeps serving when one host opens far more connections than the bounds, without running out of descriptors', async () => {
    const attackers = await Promise.all(Array.from({ length: 300 }, () => idleConnection(port, '127.0.0.2')));
    try {
      // The bound per client closes most of them at once; the rest hold a connection each, and nothing more.
      await waitUntil(
        'at most 50 connections of that host left open',
        () => attackers.filter((socket) => !socket.closed).length <= 50,
      );
      await servesEverything();
    } finally {
      for (const socket of attackers) socket.destroy();
    }
    // Their connections are given back: the same host is answered again (405: a GET on a delivery URL).
    await waitUntil(
      'the attacking host to be served again',
      async () =>
        (await send(`${url}/NOTATOKEN`, { method: 'GET', localAddress: '127.0.0.2' }).catch(() => undefined))
          ?.status === 405,
    );
  });

  it('holds stalled uploads in their upload slots, not in database connections: the rest is served meanwhile', async () => {
    // Twelve uploads on valid tokens that stall after their first byte: more than the upload slots and the pool together.
    const tokens = await Promise.all(Array.from({ length: 12 }, () => issue()));
    const uploads = tokens.map((issued) => stalledUpload(port, new URL(issued.callbackUrl).pathname));
    // The upload slots taken: the rest are turned away at once, asked to come back later.
    await waitUntil('four uploads turned away', () => uploads.filter((upload) => upload.answer()).length === 4);
    for (const upload of uploads.filter((upload) => upload.answer())) expect(upload.answer()).toMatch(/^HTTP\/1.1 503/);
    // Notifications, health checks and the job queue keep their connections.
    await servesEverythingBut503ForDeliveries();
    const abortedBefore = refusedCount(await send(`${adminUrl}/metrics`, { method: 'GET' }), 'aborted');
    for (const upload of uploads) upload.socket.destroy();
    // The slots are given back once the server has seen each held upload go.
    await waitUntil(
      'the eight held uploads counted as gone',
      async () => refusedCount(await send(`${adminUrl}/metrics`, { method: 'GET' }), 'aborted') === abortedBefore + 8,
    );
    // Every token is still good for its real delivery.
    for (const issued of tokens.slice(0, 2)) {
      expect(
        await send(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' }, body: GZIP }),
      ).toMatchObject({ status: 200 });
    }
  });

  /** While every upload slot is taken, a delivery is answered 503 (Retry-After) at once; everything else works. */
  async function servesEverythingBut503ForDeliveries(): Promise<void> {
    expect(await send(`${adminUrl}/healthz`, { method: 'GET' })).toMatchObject({ status: 200 });
    const notification = encodeNotification(
      {
        IDENTIFIER: 'HOSTILE',
        TRANSACTIONID: 'T-TRICKLE',
        ORDERID: 'HOSTILE-ORDER',
        OPERATIONTYPE: 'payment',
        EXECCODE: '0000',
      },
      SECRET,
    );
    expect(await send(`${url}/notify?${notification}`, { method: 'GET' })).toMatchObject({ status: 200 });
    const issued = await issue();
    expect(
      await send(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' }, body: GZIP }),
    ).toMatchObject({
      status: 503,
      headers: { 'retry-after': '30' },
    });
  }
});

/**
 * The slow-client timeouts of a recon serve set low, as an operator may: a trickled head and a stalled body are cut
 * once their timeout has passed, however loaded the machine. What the defaults are is the configuration's test.
 */
describe.skipIf(!hasPostgres)('recon serve cutting slow clients (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let recon: RunningRecon;
  let url: string;
  let port: number;
  let adminUrl: string;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    ({ baseUrl: url, port } = await refusingBaseUrl());
    recon = startRecon(['serve'], {
      ...testDb.env,
      RECON_SERVICE_URL: (await refusingBaseUrl()).baseUrl,
      RECON_IDENTIFIER: 'HOSTILE',
      RECON_SECRET: SECRET,
      RECON_PORT: String(port),
      RECON_CALLBACK_BASE_URL: `${url}/`,
      RECON_HEADERS_TIMEOUT_MS: '300',
      RECON_SLOW_UPLOAD_WINDOW_MS: '300',
    });
    ({ adminUrl } = await listeningUrls(recon));
  });
  afterAll(async () => {
    if (recon) {
      recon.child.kill('SIGTERM');
      expect((await recon.done).code).toBe(0);
    }
    await testDb?.drop();
  });

  it('cuts a client that trickles its request head, past RECON_HEADERS_TIMEOUT_MS', async () => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write('POST /notify HTTP/1.1\r\nHost: recon\r\nX-Trickle: ');
    // Never idle: only the head's timeout can end it.
    const trickle = setInterval(() => socket.write('a'), 50);
    try {
      await closed;
    } finally {
      clearInterval(trickle);
    }
    // Its head never ended: no request was handled, at most Node's own 408.
    expect(received === '' || received.startsWith('HTTP/1.1 408 '), received).toBe(true);
  });

  it('cuts uploads that stall their body, past RECON_SLOW_UPLOAD_WINDOW_MS, and counts them slow', async () => {
    const tokens = await Promise.all(
      Array.from({ length: 3 }, () =>
        issueExportToken(testDb.database.db, {
          callbackBaseUrl: `${url}/`,
          orderIds: ['HOSTILE-ORDER'],
          compression: 'gzip',
          nightlyRunId: null,
          expiresAt: new Date(Date.now() + 3_600_000),
        }),
      ),
    );
    const uploads = tokens.map((issued) => stalledUpload(port, new URL(issued.callbackUrl).pathname));
    await Promise.all(uploads.map((upload) => upload.closed));
    // Cut without an answer: the server stopped reading them.
    expect(uploads.map((upload) => upload.answer())).toEqual([undefined, undefined, undefined]);
    await waitUntil(
      'the cut uploads counted',
      async () => refusedCount(await send(`${adminUrl}/metrics`, { method: 'GET' }), 'slow') === 3,
    );
    // Each token is still good for its real delivery.
    for (const issued of tokens) {
      expect(
        await send(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' }, body: GZIP }),
      ).toMatchObject({ status: 200, text: 'OK' });
    }
  });
});

/**
 * A request that announces more body than it sends, whose client resets the connection: at once, or once the
 * server has answered (or read for a while).
 */
async function resetMidBody(
  port: number,
  path: string,
  contentType: string,
  body: Buffer,
  when: 'at once' | 'after the answer',
): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const closed = new Promise((resolve) => socket.once('close', resolve));
  await Promise.race([new Promise((resolve) => socket.once('connect', resolve)), closed]);
  if (socket.destroyed) return;
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: recon\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length + 100_000}\r\n\r\n`,
  );
  socket.write(body);
  if (when === 'after the answer')
    await Promise.race([new Promise((resolve) => socket.once('data', resolve)), sleep(50)]);
  socket.resetAndDestroy();
  await closed;
}

function idleConnection(port: number, localAddress: string): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress });
    socket.on('error', () => {});
    socket.once('connect', () => resolve(socket));
    socket.once('close', () => resolve(socket));
  });
}

/**
 * A chunked upload that sends its head and one byte, then stalls. `answer` is the first line of what the server has
 * answered so far, if anything.
 */
function stalledUpload(
  port: number,
  path: string,
): { socket: net.Socket; answer(): string | undefined; closed: Promise<void> } {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.once('connect', () =>
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: recon\r\nContent-Type: application/gzip\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n`,
    ),
  );
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, answer: () => (received ? received.split('\r\n', 1)[0] : undefined), closed };
}

/** A counter of recon_deliveries_refused_total in a /metrics answer (0 when not there yet). */
function refusedCount(metrics: { text: string }, reason: string): number {
  const line = metrics.text
    .split('\n')
    .find((each) => each.startsWith(`recon_deliveries_refused_total{reason="${reason}"} `));
  return line ? Number(line.split(' ')[1]) : 0;
}
