import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeNotification } from '@recon/protocol';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { IDENTIFIER, multipart, send, SECRET, startTestReceiver, type TestReceiver } from './receiver-harness.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** A notification as the service sends it, with a field the dictionary does not know. */
function notification(transactionId: string): Record<string, string> {
  return {
    IDENTIFIER,
    OPERATIONTYPE: 'capture',
    TRANSACTIONID: transactionId,
    ORDERID: `ORDER-${transactionId}`,
    EXECCODE: '0000',
    MESSAGE: 'The transaction has been accepted.',
    AMOUNT: '12990',
    CURRENCY: 'EUR',
    VERSION: '3.0',
    NEWFIELD: 'unknown to recon',
  };
}

describe.each(BACKENDS)('notifications on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    receiver = await startTestReceiver(testDb.database);
  });
  afterAll(async () => {
    await receiver?.close();
    await testDb?.drop();
  });

  async function stored(transactionId: string) {
    return testDb.database.db
      .selectFrom('recon.notifications')
      .select(['transaction_id', 'operation_type', 'exec_code', 'amount_minor', 'currency', 'hash_valid', 'params'])
      .where('transaction_id', '=', transactionId)
      .execute();
  }

  async function storedCount(): Promise<number> {
    const row = await testDb.database.db
      .selectFrom('recon.notifications')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it.skipIf(skip)(
    'answers OK to a valid notification sent by GET and stores it raw, unknown fields included',
    async () => {
      const body = encodeNotification(notification('TX-GET'), SECRET);
      expect(await send(`${receiver.url}/notify?${body}`, { method: 'GET' })).toMatchObject({
        status: 200,
        text: 'OK',
      });
      const [row, ...others] = await stored('TX-GET');
      expect(others).toEqual([]);
      expect(row).toMatchObject({
        operation_type: 'capture',
        exec_code: '0000',
        amount_minor: '12990',
        currency: 'EUR',
        hash_valid: true,
      });
      expect(row!.params).toEqual(Object.fromEntries(new URLSearchParams(body)));
      expect(row!.params.NEWFIELD).toBe('unknown to recon');
    },
  );

  it.skipIf(skip)('answers OK to a valid notification POSTed as a urlencoded or a multipart form', async () => {
    const urlencoded = encodeNotification(notification('TX-POST'), SECRET);
    expect(await send(`${receiver.url}/notify`, { headers: FORM, body: urlencoded })).toMatchObject({
      status: 200,
      text: 'OK',
    });
    const fields = Object.fromEntries(new URLSearchParams(encodeNotification(notification('TX-MULTI'), SECRET)));
    const form = multipart(Object.entries(fields).map(([name, value]) => ({ name, value })));
    expect(
      await send(`${receiver.url}/notify`, { headers: { 'content-type': form.contentType }, body: form.body }),
    ).toMatchObject({ status: 200, text: 'OK' });
    expect((await stored('TX-POST'))[0]).toMatchObject({ hash_valid: true });
    expect((await stored('TX-MULTI'))[0]).toMatchObject({ hash_valid: true, params: fields });
  });

  it.skipIf(skip)('leaves the query string of a POST out of the fields, so the notify URL may carry one', async () => {
    const body = encodeNotification(notification('TX-QUERY'), SECRET);
    expect(await send(`${receiver.url}/notify?shop=eu`, { headers: FORM, body })).toMatchObject({
      status: 200,
      text: 'OK',
    });
    expect((await stored('TX-QUERY'))[0]!.params).not.toHaveProperty('shop');
  });

  it.skipIf(skip)('answers 400 to a bad or missing HASH and keeps the notification with hash_valid false', async () => {
    const forged = new URLSearchParams(encodeNotification(notification('TX-FORGED'), SECRET));
    forged.set('AMOUNT', '1');
    const forgedAnswer = await send(`${receiver.url}/notify`, { headers: FORM, body: forged.toString() });
    expect(forgedAnswer).toMatchObject({ status: 400, text: 'HASH does not match (notification kept, not trusted)' });
    const unsigned = new URLSearchParams(notification('TX-UNSIGNED')).toString();
    expect((await send(`${receiver.url}/notify?${unsigned}`, { method: 'GET' })).status).toBe(400);
    expect(await stored('TX-FORGED')).toEqual([
      expect.objectContaining({ hash_valid: false, amount_minor: '1', params: Object.fromEntries(forged) }),
    ]);
    expect(await stored('TX-UNSIGNED')).toEqual([expect.objectContaining({ hash_valid: false })]);
  });

  it.skipIf(skip)(
    'keeps a notification whatever its bytes: a NUL in a value or a name stored escaped, the raw query kept byte for byte',
    async () => {
      const fields = { ...notification('TX-NUL\u0000A'), MESSAGE: 'ok\u0000then', 'ODD\u0000NAME': 'x' };
      const query = encodeNotification(fields, SECRET);
      expect(await send(`${receiver.url}/notify?${query}`, { method: 'GET' })).toMatchObject({
        status: 200,
        text: 'OK',
      });
      const [row] = await testDb.database.db
        .selectFrom('recon.notifications')
        .select(['transaction_id', 'hash_valid', 'params', 'raw'])
        .where('transaction_id', '=', 'TX-NUL\\u0000A')
        .execute();
      expect(row).toMatchObject({ transaction_id: 'TX-NUL\\u0000A', hash_valid: true });
      expect(row!.params).toMatchObject({ MESSAGE: 'ok\\u0000then', 'ODD\\u0000NAME': 'x' });
      expect(Buffer.from(row!.raw!).toString('latin1')).toBe(query);

      // The same bytes with a wrong HASH: kept too, answered 400.
      const forged = query.replace(/HASH=[0-9a-f]+/, `HASH=${'0'.repeat(64)}`);
      expect(await send(`${receiver.url}/notify`, { headers: FORM, body: forged })).toMatchObject({ status: 400 });
      const rows = await testDb.database.db
        .selectFrom('recon.notifications')
        .select(['hash_valid', 'raw'])
        .where('transaction_id', '=', 'TX-NUL\\u0000A')
        .execute();
      expect(rows.map((each) => each.hash_valid).sort()).toEqual([false, true]);
      expect(rows.map((each) => Buffer.from(each.raw!).toString('latin1'))).toContain(forged);
    },
  );

  it.skipIf(skip)(
    'refuses without storing what is not a notification: no fields, a repeated field, another body type, too large',
    async () => {
      const before = await storedCount();
      expect(await send(`${receiver.url}/notify`, { method: 'GET' })).toMatchObject({
        status: 400,
        text: 'no notification fields',
      });
      const repeated = `${encodeNotification(notification('TX-TWICE'), SECRET)}&EXECCODE=0000`;
      expect(await send(`${receiver.url}/notify`, { headers: FORM, body: repeated })).toMatchObject({
        status: 400,
        text: 'invalid parameter EXECCODE: given more than once',
      });
      expect(
        await send(`${receiver.url}/notify`, {
          headers: { 'content-type': 'application/json' },
          body: '{"EXECCODE":"0000"}',
        }),
      ).toMatchObject({
        status: 415,
        text: 'unsupported content type application/json: send application/x-www-form-urlencoded',
      });
      const huge = `${encodeNotification(notification('TX-HUGE'), SECRET)}&PADDING=${'x'.repeat(70_000)}`;
      expect(await send(`${receiver.url}/notify`, { headers: FORM, body: huge })).toMatchObject({
        status: 413,
        text: 'notification body over 65536 bytes',
      });
      expect(await send(`${receiver.url}/notify`, { method: 'PUT', headers: FORM, body: 'A=1' })).toMatchObject({
        status: 405,
        headers: { allow: 'GET, POST' },
      });
      expect(await storedCount()).toBe(before);
    },
  );
});
