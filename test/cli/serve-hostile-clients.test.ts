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
      await sleep(500);
      const open = attackers.filter((socket) => !socket.closed).length;
      expect(open).toBeLessThanOrEqual(50);
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

  it.concurrent(
    'cuts a client that trickles its request head, within a minute',
    async () => {
      const started = Date.now();
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write('POST /notify HTTP/1.1\r\nHost: recon\r\nX-Trickle: ');
      const trickle = setInterval(() => socket.write('a'), 1000);
      try {
        await new Promise((resolve) => socket.once('close', resolve));
      } finally {
        clearInterval(trickle);
      }
      expect(Date.now() - started).toBeLessThan(60_000);
    },
    90_000,
  );

  it.concurrent(
    'cuts uploads that trickle their body, within a minute: meanwhile they hold no database connection',
    async () => {
      // Twelve uploads on valid tokens sending a byte a second: more than the upload slots and the pool together.
      const tokens = await Promise.all(Array.from({ length: 12 }, () => issue()));
      const started = Date.now();
      const uploads = tokens.map((issued) => trickleBody(port, new URL(issued.callbackUrl).pathname));
      await Promise.all(uploads.map((upload) => upload.headersSent));
      await sleep(1_000);
      // Notifications, health checks and the job queue keep their connections.
      await servesEverythingBut503ForDeliveries();
      const outcomes = await Promise.all(uploads.map((upload) => upload.ended));
      expect(Date.now() - started).toBeLessThan(60_000);
      // The client sees its connection close a moment before the server has let go of the upload's slot.
      let metrics = '';
      await waitUntil('the cut uploads counted', async () => {
        metrics = (await send(`${adminUrl}/metrics`, { method: 'GET' })).text;
        return metrics.includes('recon_deliveries_refused_total{reason="slow"} 8\n');
      }).catch((error: unknown) => {
        throw new Error(
          `${(error as Error).message}: ${metrics
            .split('\n')
            .filter((line) => line.startsWith('recon_deliveries'))
            .join('; ')}; ${recon.stderrSoFar()}`,
        );
      });
      // The upload slots taken: the rest were turned away at once, asked to come back later.
      expect(outcomes.filter((outcome) => outcome === 'closed').length).toBe(8);
      expect(outcomes.filter((outcome) => outcome.startsWith('HTTP/1.1 503')).length).toBe(4);
      // Every token is still good for its real delivery.
      for (const issued of tokens.slice(0, 2)) {
        expect(
          await send(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' }, body: GZIP }),
        ).toMatchObject({ status: 200 });
      }
    },
    90_000,
  );

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

/** A chunked upload sending one byte a second; `ended` is the answer's first line, or `closed` when cut without one. */
function trickleBody(port: number, path: string): { headersSent: Promise<void>; ended: Promise<string> } {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  const headersSent = new Promise<void>((resolve) =>
    socket.once('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: recon\r\nContent-Type: application/gzip\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      resolve();
    }),
  );
  const trickle = setInterval(() => socket.write('1\r\nx\r\n'), 1000);
  const ended = new Promise<string>((resolve) =>
    socket.once('close', () => {
      clearInterval(trickle);
      resolve(received ? received.split('\r\n', 1)[0]! : 'closed');
    }),
  );
  return { headersSent, ended };
}
