import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStoredDelivery } from '../../src/receive/open-stored-delivery.ts';
import { spoolDelivery } from '../../src/receive/spool-delivery.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { multipart, open, send, startTestReceiver, type TestReceiver } from './receiver-harness.ts';

const LIMIT = 3 * 1024 * 1024;
const GZIP = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), randomBytes(3000)]);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each(BACKENDS)('export deliveries on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    receiver = await startTestReceiver(testDb.database, { maxFileBytes: LIMIT });
  });
  afterAll(async () => {
    await receiver?.close();
    await testDb?.drop();
  });

  async function deliveriesOf(requestId: string) {
    return testDb.database.db.selectFrom('recon.deliveries').selectAll().where('request_id', '=', requestId).execute();
  }

  async function chunkCount(): Promise<number> {
    const row = await testDb.database.db
      .selectFrom('recon.delivery_chunks')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async function chunksTableBytes(): Promise<string> {
    const { rows } = await sql<{
      bytes: string;
    }>`SELECT pg_total_relation_size('recon.delivery_chunks')::text AS bytes`.execute(testDb.database.db);
    return rows[0]!.bytes;
  }

  async function requestState(requestId: string) {
    return testDb.database.db
      .selectFrom('recon.export_requests')
      .select(['state', 'delivered_at'])
      .where('request_id', '=', requestId)
      .executeTakeFirstOrThrow();
  }

  async function storedContent(deliveryId: string): Promise<Buffer> {
    return buffer((await openStoredDelivery(testDb.database.db, deliveryId)).content);
  }

  it.skipIf(skip)(
    'stores a multipart upload whose file is in a part not named file, beside text fields, before answering 200',
    async () => {
      const issued = await receiver.issue();
      const form = multipart([
        { name: 'OPERATIONTYPE', value: 'getTransactions' },
        { name: 'export', value: GZIP, filename: 'export.csv.gz', type: 'application/gzip' },
        { name: 'ROWS', value: '42' },
      ]);
      const answer = await send(issued.callbackUrl, { headers: { 'content-type': form.contentType }, body: form.body });
      expect(answer).toMatchObject({ status: 200, text: 'OK' });

      const [delivery, ...others] = await deliveriesOf(issued.requestId);
      expect(others).toEqual([]);
      expect(delivery).toMatchObject({
        sha256: sha256(GZIP),
        bytes: String(GZIP.length),
        content_type: 'application/gzip',
        filename: 'export.csv.gz',
        fields: { OPERATIONTYPE: 'getTransactions', ROWS: '42' },
        state: 'received',
        file_id: null,
      });
      expect(await storedContent(String(delivery!.delivery_id))).toEqual(GZIP);
      expect(await requestState(issued.requestId)).toMatchObject({
        state: 'delivered',
        delivered_at: expect.any(Date),
      });
      expect(receiver.delivered).toContain(String(delivery!.delivery_id));
    },
  );

  it.skipIf(skip)(
    'stores a multipart file part that has no filename but says it is application/octet-stream',
    async () => {
      const issued = await receiver.issue();
      const form = multipart([{ name: 'data', value: GZIP, type: 'application/octet-stream' }]);
      expect(
        (await send(issued.callbackUrl, { headers: { 'content-type': form.contentType }, body: form.body })).status,
      ).toBe(200);
      const [delivery] = await deliveriesOf(issued.requestId);
      expect(delivery).toMatchObject({
        filename: null,
        content_type: 'application/octet-stream',
        sha256: sha256(GZIP),
      });
    },
  );

  it
    .skipIf(skip)
    .each([
      'application/octet-stream',
      'application/zip',
      'application/gzip',
      'application/x-bzip2',
      'text/csv; charset=utf-8',
      undefined,
    ])('stores a raw body sent as %s', async (contentType) => {
    const issued = await receiver.issue();
    const body = Buffer.from(`TRANSACTIONID;ORDERID\nT-${issued.token};O-1\n`);
    const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
    expect(await send(issued.callbackUrl, { headers, body })).toMatchObject({ status: 200, text: 'OK' });
    const [delivery] = await deliveriesOf(issued.requestId);
    expect(delivery).toMatchObject({
      content_type: contentType ?? null,
      filename: null,
      fields: {},
      bytes: String(body.length),
      sha256: sha256(body),
    });
    expect(await storedContent(String(delivery!.delivery_id))).toEqual(body);
  });

  it.skipIf(skip)(
    'keeps a file larger than one chunk in pieces and gives it back byte for byte, to a stream or a file',
    async () => {
      const issued = await receiver.issue();
      const body = randomBytes(2.5 * 1024 * 1024);
      expect((await send(issued.callbackUrl, { headers: { 'content-type': 'application/zip' }, body })).status).toBe(
        200,
      );
      const [delivery] = await deliveriesOf(issued.requestId);
      const deliveryId = String(delivery!.delivery_id);
      const chunks = await testDb.database.db
        .selectFrom('recon.delivery_chunks')
        .select(['seq', (eb) => eb.fn<number>('octet_length', ['data']).as('size')])
        .where('delivery_id', '=', deliveryId)
        .orderBy('seq')
        .execute();
      expect(chunks.map((chunk) => chunk.seq)).toEqual([0, 1, 2]);
      expect(chunks.reduce((sum, chunk) => sum + Number(chunk.size), 0)).toBe(body.length);

      const stored = await openStoredDelivery(testDb.database.db, deliveryId);
      expect({ sha256: stored.sha256, bytes: stored.bytes }).toEqual({ sha256: sha256(body), bytes: body.length });
      expect(await buffer(stored.content)).toEqual(body);
      const spooled = await spoolDelivery(testDb.database.db, deliveryId);
      try {
        expect(await readFile(spooled.path)).toEqual(body);
      } finally {
        await spooled.remove();
      }
    },
  );

  it.skipIf(skip)('answers 200 to the same content again on the same token and changes nothing', async () => {
    const issued = await receiver.issue();
    const first = await send(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' }, body: GZIP });
    const before = await deliveriesOf(issued.requestId);
    const form = multipart([{ name: 'file', value: GZIP, filename: 'again.gz' }]);
    const again = await send(issued.callbackUrl, { headers: { 'content-type': form.contentType }, body: form.body });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(await deliveriesOf(issued.requestId)).toEqual(before);
    expect(receiver.delivered.filter((id) => id === String(before[0]!.delivery_id))).toHaveLength(1);
  });

  it.skipIf(skip)('answers 404 "token already used" to other content on a token that has its delivery', async () => {
    const issued = await receiver.issue();
    await send(issued.callbackUrl, { body: GZIP });
    const before = await deliveriesOf(issued.requestId);
    expect(await send(issued.callbackUrl, { body: Buffer.from('other content') })).toMatchObject({
      status: 404,
      text: 'token already used',
    });
    expect(await deliveriesOf(issued.requestId)).toEqual(before);
  });

  it.skipIf(skip)(
    'answers 404 to an unknown token, or a path that cannot be one, without storing anything',
    async () => {
      const chunksBefore = await chunkCount();
      expect(await send(`${receiver.url}/ZZZZZZZZZZ`, { body: GZIP })).toMatchObject({
        status: 404,
        text: 'unknown token',
      });
      expect(await send(`${receiver.url}/not-a-token`, { body: GZIP })).toMatchObject({
        status: 404,
        text: 'unknown token',
      });
      expect(await chunkCount()).toBe(chunksBefore);
    },
  );

  it.skipIf(skip)('answers 404 "token expired" past expires_at, and for a request given up or failed', async () => {
    const expired = await receiver.issue({ expiresAt: new Date(Date.now() - 1000) });
    expect(await send(expired.callbackUrl, { body: GZIP })).toMatchObject({ status: 404, text: 'token expired' });
    const closed = [];
    for (const state of ['given_up', 'failed'] as const) {
      const issued = await receiver.issue();
      await testDb.database.db
        .updateTable('recon.export_requests')
        .set({ state })
        .where('request_id', '=', issued.requestId)
        .execute();
      expect(await send(issued.callbackUrl, { body: GZIP })).toMatchObject({ status: 404, text: 'token expired' });
      closed.push(issued.requestId);
    }
    for (const requestId of [expired.requestId, ...closed]) expect(await deliveriesOf(requestId)).toEqual([]);
  });

  it.skipIf(skip)(
    'takes a late delivery on a request that timed out (and was asked again) while its token lives',
    async () => {
      const timedOut = await receiver.issue();
      await testDb.database.db
        .updateTable('recon.export_requests')
        .set({ state: 'timed_out' })
        .where('request_id', '=', timedOut.requestId)
        .execute();
      expect((await send(timedOut.callbackUrl, { body: GZIP })).status).toBe(200);
      expect(await deliveriesOf(timedOut.requestId)).toHaveLength(1);
    },
  );

  it.skipIf(skip)('acknowledges a repeated delivery even after its token expired', async () => {
    let now = new Date('2026-11-02T10:00:00Z');
    const clocked = await startTestReceiver(testDb.database, { now: () => now });
    try {
      const issued = await clocked.issue({ expiresAt: new Date('2026-11-02T11:00:00Z') });
      expect((await send(issued.callbackUrl, { body: GZIP })).status).toBe(200);
      now = new Date('2026-11-02T12:00:00Z');
      expect((await send(issued.callbackUrl, { body: GZIP })).status).toBe(200);
      const [delivery] = await deliveriesOf(issued.requestId);
      expect(delivery!.received_at).toEqual(new Date('2026-11-02T10:00:00Z'));
    } finally {
      await clocked.close();
    }
  });

  it.skipIf(skip)(
    'refuses a body over RECON_MAX_FILE_BYTES with 413 while it is still being sent, and stores nothing',
    async () => {
      const issued = await receiver.issue();
      const chunksBefore = await chunkCount();
      const bytesBefore = await chunksTableBytes();
      // Chunked, and never ended before the answer: a server that buffered the whole body first could not answer.
      const upload = open(issued.callbackUrl, { headers: { 'content-type': 'application/octet-stream' } });
      upload.request.write(randomBytes(LIMIT));
      upload.request.write(Buffer.from('!'));
      const answer = await upload.answer;
      upload.request.end();
      expect(answer).toMatchObject({ status: 413, text: `body over RECON_MAX_FILE_BYTES (${LIMIT} bytes)` });
      expect(await deliveriesOf(issued.requestId)).toEqual([]);
      expect(await chunkCount()).toBe(chunksBefore);
      // Not even dead rows: the body never reached the database (a rolled-back insert still grows the table).
      expect(await chunksTableBytes()).toBe(bytesBefore);
      expect((await requestState(issued.requestId)).state).toBe('requested');
      // Nothing was used up: the token still takes its delivery.
      expect((await send(issued.callbackUrl, { body: GZIP })).status).toBe(200);
    },
  );

  it.skipIf(skip)('refuses a multipart file over the limit with 413 and stores nothing', async () => {
    const issued = await receiver.issue();
    const form = multipart([{ name: 'upload', value: randomBytes(LIMIT + 1), filename: 'big.zip' }]);
    const answer = await send(issued.callbackUrl, { headers: { 'content-type': form.contentType }, body: form.body });
    expect(answer.status).toBe(413);
    expect(await deliveriesOf(issued.requestId)).toEqual([]);
  });

  it.skipIf(skip)('refuses a raw body that announces more than the limit before reading any of it', async () => {
    const issued = await receiver.issue();
    const { pathname, port } = new URL(issued.callbackUrl);
    const socket = connect(Number(port), '127.0.0.1');
    // Headers only: the answer must come without the body ever being sent.
    socket.end(
      `POST ${pathname} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/gzip\r\ncontent-length: ${LIMIT + 1}\r\n\r\n`,
    );
    const raw = (await buffer(socket)).toString('latin1');
    expect(raw).toMatch(/^HTTP\/1\.1 413 /);
    expect(raw).toContain(`body over RECON_MAX_FILE_BYTES (${LIMIT} bytes)`);
    expect(await deliveriesOf(issued.requestId)).toEqual([]);
  });

  it.skipIf(skip)('answers 400 to an empty body, raw or as an empty file part', async () => {
    const issued = await receiver.issue();
    expect(await send(issued.callbackUrl, { body: Buffer.alloc(0) })).toMatchObject({
      status: 400,
      text: 'empty body: the delivered file has no bytes',
    });
    const form = multipart([{ name: 'file', value: Buffer.alloc(0), filename: 'empty.csv' }]);
    expect(
      (await send(issued.callbackUrl, { headers: { 'content-type': form.contentType }, body: form.body })).status,
    ).toBe(400);
    expect(await deliveriesOf(issued.requestId)).toEqual([]);
  });

  it.skipIf(skip)('answers 400 to a multipart body without a file, with two files, or cut short', async () => {
    const issued = await receiver.issue();
    const fieldsOnly = multipart([{ name: 'ROWS', value: '3' }]);
    expect(
      await send(issued.callbackUrl, { headers: { 'content-type': fieldsOnly.contentType }, body: fieldsOnly.body }),
    ).toMatchObject({
      status: 400,
      text: 'no file in the multipart body',
    });
    const twoFiles = multipart([
      { name: 'a', value: GZIP, filename: 'a.gz' },
      { name: 'b', value: GZIP, filename: 'b.gz' },
    ]);
    expect(
      await send(issued.callbackUrl, { headers: { 'content-type': twoFiles.contentType }, body: twoFiles.body }),
    ).toMatchObject({
      status: 400,
      text: 'more than one file in the multipart body',
    });
    const cut = multipart([{ name: 'file', value: GZIP, filename: 'a.gz' }]);
    const answer = await send(issued.callbackUrl, {
      headers: { 'content-type': cut.contentType },
      body: cut.body.subarray(0, cut.body.length - 20),
    });
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(/^malformed multipart\/form-data: /);
    expect(answer.text).not.toContain('\n');
    expect(await deliveriesOf(issued.requestId)).toEqual([]);
  });

  it.skipIf(skip)('answers 415 to a body that is neither multipart/form-data nor a file', async () => {
    const issued = await receiver.issue();
    expect(
      await send(issued.callbackUrl, { headers: { 'content-type': 'application/json' }, body: '{}' }),
    ).toMatchObject({
      status: 415,
      text: 'unsupported content type application/json: send multipart/form-data or the file as the body',
    });
  });

  it.skipIf(skip)(
    'leaves nothing when the sender goes away in the middle of the body, and the token stays usable',
    async () => {
      const issued = await receiver.issue();
      const upload = open(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' } });
      upload.answer.catch(() => {});
      upload.request.write(randomBytes(1.5 * 1024 * 1024));
      await receiver.until(() =>
        receiver.events.some((event) => event.type === 'delivery-receiving' && event.requestId === issued.requestId),
      );
      const refusalsBefore = receiver.events.filter(
        (event) => event.type === 'delivery-refused' && event.reason === 'aborted',
      ).length;
      upload.request.destroy();
      await receiver.until(
        () =>
          receiver.events.filter((event) => event.type === 'delivery-refused' && event.reason === 'aborted').length >
          refusalsBefore,
      );
      expect(await deliveriesOf(issued.requestId)).toEqual([]);
      expect((await requestState(issued.requestId)).state).toBe('requested');
      expect((await send(issued.callbackUrl, { body: GZIP })).status).toBe(200);
    },
  );

  it.skipIf(skip)(
    'reads out the body of a refused request, so that its keep-alive connection carries the next delivery',
    async () => {
      const issued = await receiver.issue();
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const post = (url: string, body: Buffer) =>
          new Promise<{ status: number; reusedSocket: boolean }>((resolve, reject) => {
            const request = httpRequest(
              url,
              { method: 'POST', agent, headers: { 'content-type': 'application/gzip' } },
              (response) => {
                response.resume();
                response.on('end', () => resolve({ status: response.statusCode!, reusedSocket: request.reusedSocket }));
              },
            );
            request.on('error', reject);
            request.end(body);
          });
        expect(await post(`${receiver.url}/UNKNOWNTOKEN`, randomBytes(200_000))).toEqual({
          status: 404,
          reusedSocket: false,
        });
        expect(await post(issued.callbackUrl, GZIP)).toEqual({ status: 200, reusedSocket: true });
      } finally {
        agent.destroy();
      }
    },
  );

  it.skipIf(skip)('answers 405 to another method on a delivery URL and 404 outside the routes', async () => {
    const issued = await receiver.issue();
    expect(await send(issued.callbackUrl, { method: 'GET' })).toMatchObject({
      status: 405,
      headers: { allow: 'POST' },
    });
    const elsewhere = await startTestReceiver(testDb.database, { callbackBaseUrl: 'http://127.0.0.1:9/cb/' });
    try {
      expect(await send(`${elsewhere.url}/other/${issued.token}`, { body: GZIP })).toMatchObject({
        status: 404,
        text: 'not found',
      });
      expect(await send(`${elsewhere.url}/cb/${issued.token}`, { body: GZIP })).toMatchObject({
        status: 200,
        text: 'OK',
      });
    } finally {
      await elsewhere.close();
    }
  });

  it.skipIf(skip)('still answers 200 and keeps the delivery in state received when onDelivered fails', async () => {
    const failing = await startTestReceiver(testDb.database, {
      onDelivered: () => Promise.reject(new Error('queue unavailable')),
    });
    try {
      const issued = await failing.issue();
      expect(await send(issued.callbackUrl, { body: GZIP })).toMatchObject({ status: 200, text: 'OK' });
      await failing.until(() => failing.events.some((event) => event.type === 'delivery-hook-failed'));
      const [delivery] = await deliveriesOf(issued.requestId);
      expect(delivery!.state).toBe('received');
      expect(failing.events.find((event) => event.type === 'delivery-hook-failed')).toMatchObject({
        deliveryId: String(delivery!.delivery_id),
        error: new Error('queue unavailable'),
      });
      expect(await failing.metrics.metrics()).toContain('recon_delivery_hook_failures_total 1\n');
    } finally {
      await failing.close();
    }
  });
});
