import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXPORT_COLUMNS, signParams, type Params } from '@recon/protocol';
import { createSandboxClock } from '../../src/clock.ts';
import { createSandbox } from '../../src/sandbox.ts';
import type { Sandbox, SandboxEvent } from '../../src/sandbox.ts';
import { seedScenario } from '../../src/scenario/seed-scenario.ts';
import type { ScenarioSummary } from '../../src/scenario/seed-scenario.ts';
import { postSigned } from '../support/sandbox-harness.ts';
import { startMailReceiver } from './mail-receiver.ts';
import type { MailReceiver } from './mail-receiver.ts';
import { readExportFile } from './read-export-file.ts';
import { startUploadReceiver } from './upload-receiver.ts';
import type { UploadReceiver } from './upload-receiver.ts';

const IDENTIFIER = 'EXPORT-SHOP';
const SECRET = 'export-account-key';
const RETRY_ATTEMPTS = 3;

let sandbox: Sandbox;
let baseUrl: string;
let uploads: UploadReceiver;
let mail: MailReceiver;
let scenario: ScenarioSummary;
let events: SandboxEvent[];

beforeAll(async () => {
  uploads = await startUploadReceiver();
  mail = await startMailReceiver();
  sandbox = createSandbox({
    identifier: IDENTIFIER,
    secret: SECRET,
    clock: createSandboxClock({ start: new Date('2026-10-20T08:00:00Z'), ticking: false }),
    smtp: { host: mail.host, port: mail.port },
    exportRetry: { attempts: RETRY_ATTEMPTS, baseDelayMs: 20, maxDelayMs: 100 },
    onEvent: (event) => events.push(event),
  });
  baseUrl = await sandbox.listen(0, '127.0.0.1');
  scenario = seedScenario(
    { store: sandbox.store, clock: sandbox.clock, identifier: IDENTIFIER, secret: SECRET, notify: () => {} },
    { seed: 2026 },
  );
});
beforeEach(() => {
  events = [];
});
afterAll(async () => {
  await sandbox?.close();
  await uploads?.close();
  await mail?.close();
});

/** POSTs a signed getTransactions request to the export endpoint, as a merchant's system would. */
function getTransactions(params: Params): Promise<Record<string, unknown>> {
  return postSigned(baseUrl, 'getTransactions', { IDENTIFIER, VERSION: '3.0', ...params }, SECRET);
}

async function rowsOf(params: Params): Promise<Record<string, string>[]> {
  const answer = await getTransactions(params);
  expect(answer).toMatchObject({ OPERATIONTYPE: 'getTransactions', EXECCODE: '0000' });
  return answer.DATA as Record<string, string>[];
}

const ordersOf = (...outcomes: (keyof ScenarioSummary['ordersByOutcome'])[]) =>
  outcomes.flatMap((outcome) => scenario.ordersByOutcome[outcome]).join(';');

describe('getTransactions over HTTP, synchronous', () => {
  it('answers every column by default, every value a string', async () => {
    const rows = await rowsOf({ ORDERID: scenario.orderIds.join(';') });
    expect(rows).toHaveLength(sandbox.store.all().length);
    for (const row of rows) {
      expect(Object.keys(row)).toEqual([...EXPORT_COLUMNS]);
      for (const value of Object.values(row)) expect(typeof value).toBe('string');
    }
  });

  it('answers the columns asked, in that order, with values as the service writes them and DATE in TIMEZONE', async () => {
    const columns = ['TRANSACTIONID', 'DATE', 'AMOUNT', 'EXECCODE', 'SCHEDULE', 'OPERATIONTYPE', 'ORDERID'];
    const rows = await rowsOf({
      ORDERID: ordersOf('refunded-several', 'captured-partial', 'pending', 'refused'),
      COLUMNS: columns.join(';'),
      TIMEZONE: 'Asia/Tokyo',
    });
    expect(rows.length).toBeGreaterThan(4);
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(columns);
      const transaction = sandbox.store.get(row.TRANSACTIONID!)!;
      expect(row.ORDERID).toBe(transaction.orderId);
      expect(row.OPERATIONTYPE).toBe(transaction.operationType);
      expect(row.AMOUNT).toMatch(/^\d+\.\d\d$/);
      expect(BigInt(row.AMOUNT!.replace('.', ''))).toBe(transaction.amount);
      expect(row.EXECCODE).toBe(String(Number(transaction.execCode)));
      // Tokyo keeps UTC+9 all year.
      const tokyo = new Date(transaction.createdAt.getTime() + 9 * 3_600_000).toISOString();
      expect(row.DATE).toBe(`${tokyo.slice(0, 10)} ${tokyo.slice(11, 19)}`);
      const instalmentCapture = transaction.method === 'instalment' && transaction.operationType === 'capture';
      if (instalmentCapture) expect(row.SCHEDULE).toMatch(/^\[1-[34]\]$/);
      if (transaction.method === 'wallet') expect(row.SCHEDULE).toBe('');
    }
    expect(rows.map((row) => row.EXECCODE)).toContain('3');
  });

  it('selects by several TRANSACTIONIDs', async () => {
    const ids = sandbox.store
      .all()
      .slice(3, 6)
      .map((transaction) => transaction.transactionId);
    const rows = await rowsOf({ TRANSACTIONID: ids.join(';'), COLUMNS: 'TRANSACTIONID' });
    expect(rows).toEqual(ids.map((TRANSACTIONID) => ({ TRANSACTIONID })));
  });

  it('answers a column it does not know with an empty value under the name asked', async () => {
    const rows = await rowsOf({ ORDERID: scenario.orderIds[0]!, COLUMNS: 'AMOUNT;CARDHOLDERNAME;TRANSFER REFERENCE' });
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows)
      expect(row).toEqual({
        AMOUNT: expect.stringMatching(/^\d+\.\d{2}$/),
        CARDHOLDERNAME: '',
        'TRANSFER REFERENCE': '',
      });
  });
});

describe('getTransactions over HTTP, delivered to a CALLBACKURL', () => {
  const request = () => ({
    ORDERID: ordersOf('refunded-several', 'pending-expired', 'captured-full'),
    COLUMNS: 'ORDERID;TRANSACTIONID;AMOUNT;BILLINGFEES INCL. VAT;EXECCODE;CLIENTADDRESS;DATE',
    TIMEZONE: 'Europe/Paris',
  });

  it.each([
    ['zip', /^transactions-\d{8}-\d{6}\.csv\.zip$/, 'application/zip'],
    ['gzip', /^transactions-\d{8}-\d{6}\.csv\.gz$/, 'application/gzip'],
    ['bzip', /^transactions-\d{8}-\d{6}\.csv\.bz2$/, 'application/x-bzip2'],
    [undefined, /^transactions-\d{8}-\d{6}\.csv$/, 'text/csv'],
  ])(
    'COMPRESSION=%s: 0000 at once, then the csv uploaded as multipart, retried after a failure',
    async (compression, filename, mimeType) => {
      const expected = await rowsOf(request());
      const callbackUrl = `${uploads.url}/export-cb`;
      expect(callbackUrl.length).toBeLessThanOrEqual(32);
      const before = uploads.received.length;
      uploads.failNext(1);

      const answer = await getTransactions({
        ...request(),
        CALLBACKURL: callbackUrl,
        ...(compression ? { COMPRESSION: compression } : {}),
      });
      expect(answer).toMatchObject({ OPERATIONTYPE: 'getTransactions', EXECCODE: '0000' });
      expect(answer).not.toHaveProperty('DATA');
      await sandbox.exports.idle();

      const attempts = uploads.received.slice(before);
      expect(attempts.map((attempt) => attempt.status)).toEqual([503, 200]);
      const delivered = attempts[1]!;
      expect(delivered.contentType).toMatch(/^multipart\/form-data; boundary=/);
      expect(delivered.files).toHaveLength(1);
      const file = delivered.files[0]!;
      expect(file.filename).toMatch(filename);
      expect(file.mimeType).toBe(mimeType);
      const { csv, rows } = await readExportFile(file.filename, file.bytes);
      expect(csv.split('\n')[0]).toBe(
        'ORDERID;TRANSACTIONID;AMOUNT;"BILLINGFEES INCL. VAT";EXECCODE;CLIENTADDRESS;DATE',
      );
      expect(csv.endsWith('\n')).toBe(true);
      expect(csv).not.toContain('\r');
      expect(rows).toEqual(expected);
      expect(events).toEqual([]);
    },
  );

  it('gives up after the bounded retries and reports it, the merchant having had its 0000', async () => {
    const before = uploads.received.length;
    uploads.failNext(RETRY_ATTEMPTS);
    const answer = await getTransactions({ ...request(), CALLBACKURL: `${uploads.url}/down`, COMPRESSION: 'gzip' });
    expect(answer.EXECCODE).toBe('0000');
    await sandbox.exports.idle();
    expect(uploads.received.slice(before).map((attempt) => attempt.status)).toEqual(Array(RETRY_ATTEMPTS).fill(503));
    expect(events).toEqual([
      {
        type: 'export-failed',
        label: `to ${uploads.url}/down`,
        error: expect.objectContaining({ message: expect.stringMatching(/HTTP 503/) }),
      },
    ]);
  });

  it('refuses a CALLBACKURL over 32 characters and MAILTO with CALLBACKURL, sending nothing', async () => {
    const before = uploads.received.length;
    const long = await getTransactions({ ...request(), CALLBACKURL: `${uploads.url}/a-path-too-long-for-the-field` });
    expect(long).toMatchObject({ EXECCODE: '1002', MESSAGE: expect.stringMatching(/CALLBACKURL/) });
    const both = await getTransactions({ ...request(), CALLBACKURL: `${uploads.url}/cb`, MAILTO: 'ops@example.org' });
    expect(both).toMatchObject({ EXECCODE: '1002', MESSAGE: expect.stringMatching(/mutually exclusive/) });
    await sandbox.exports.idle();
    expect(uploads.received.length).toBe(before);
  });
});

describe('getTransactions over HTTP, its options in any letter case', () => {
  it.each([
    ['GZIP', '.csv.gz', 'application/gzip'],
    ['Zip', '.csv.zip', 'application/zip'],
    ['BZip', '.csv.bz2', 'application/x-bzip2'],
  ])('COMPRESSION=%s compresses as its lower-case name', async (compression, extension, mimeType) => {
    const params = { ORDERID: ordersOf('captured-full'), COLUMNS: 'TRANSACTIONID;AMOUNT' };
    const expected = await rowsOf(params);
    const before = uploads.received.length;
    const answer = await getTransactions({ ...params, COMPRESSION: compression, CALLBACKURL: `${uploads.url}/case` });
    expect(answer).toMatchObject({ EXECCODE: '0000' });
    await sandbox.exports.idle();
    const [delivered] = uploads.received.slice(before);
    const file = delivered!.files[0]!;
    expect(file.filename.endsWith(extension)).toBe(true);
    expect(file.mimeType).toBe(mimeType);
    expect((await readExportFile(file.filename, file.bytes)).rows).toEqual(expected);
  });

  it('answers columns named in any case under their documented names, in a time zone and SCOPE in any case', async () => {
    const orderId = ordersOf('refunded-partial');
    const exact = await rowsOf({
      ORDERID: orderId,
      COLUMNS: 'TRANSACTIONID;AMOUNT;BILLINGFEES INCL. VAT;DATE',
      TIMEZONE: 'Europe/Paris',
      SCOPE: 'CLIENT',
    });
    const anyCase = await rowsOf({
      ORDERID: orderId,
      COLUMNS: 'transactionId;amount;Billingfees Incl. Vat;date',
      TIMEZONE: 'europe/paris',
      SCOPE: 'client',
    });
    expect(anyCase).toEqual(exact);
    expect(Object.keys(anyCase[0]!)).toEqual(['TRANSACTIONID', 'AMOUNT', 'BILLINGFEES INCL. VAT', 'DATE']);
  });

  it('still refuses a column named twice in two spellings, and an OPERATIONTYPE in capitals', async () => {
    expect(await getTransactions({ ORDERID: scenario.orderIds[0]!, COLUMNS: 'AMOUNT;amount' })).toMatchObject({
      EXECCODE: '1002',
      MESSAGE: 'invalid parameter COLUMNS: column "AMOUNT" is named twice',
    });
    const body = new URLSearchParams({ method: 'GETTRANSACTIONS' });
    for (const [name, value] of Object.entries(
      signParams(SECRET, {
        IDENTIFIER,
        VERSION: '3.0',
        OPERATIONTYPE: 'GETTRANSACTIONS',
        ORDERID: scenario.orderIds[0]!,
      }),
    )) {
      body.append(`params[${name}]`, value as string);
    }
    const answer = await (await fetch(`${baseUrl}/front/service/rest/export`, { method: 'POST', body })).json();
    expect(answer).toMatchObject({ EXECCODE: '1002', MESSAGE: expect.stringContaining('OPERATIONTYPE') });
  });
});

describe('getTransactions over HTTP, e-mailed to MAILTO', () => {
  it.each([
    ['zip', '.csv.zip', 'application/zip'],
    ['gzip', '.csv.gz', 'application/gzip'],
    ['bzip', '.csv.bz2', 'application/x-bzip2'],
  ])(
    'COMPRESSION=%s: the compressed csv arrives as an attachment through SMTP',
    async (compression, extension, contentType) => {
      const params = {
        ORDERID: ordersOf('refunded-partial', 'validated', 'awaiting-cardholder'),
        TIMEZONE: 'America/New_York',
      };
      const expected = await rowsOf(params);
      const to = `accounting+${compression}@example.org`;
      const answer = await getTransactions({ ...params, MAILTO: to, COMPRESSION: compression });
      expect(answer).toMatchObject({ OPERATIONTYPE: 'getTransactions', EXECCODE: '0000' });
      await sandbox.exports.idle();

      const messages = mail.messages.filter((message) => message.to.includes(to));
      expect(messages).toHaveLength(1);
      const { mail: message } = messages[0]!;
      expect(message.subject).toContain(IDENTIFIER);
      expect(message.attachments).toHaveLength(1);
      const attachment = message.attachments[0]!;
      expect(attachment.filename!.endsWith(extension)).toBe(true);
      expect(attachment.contentType).toBe(contentType);
      const { rows } = await readExportFile(attachment.filename!, attachment.content);
      expect(rows).toEqual(expected);
      expect(rows[0]).toHaveProperty('BILLINGFEES INCL. VAT');
      expect(events).toEqual([]);
    },
  );
});
