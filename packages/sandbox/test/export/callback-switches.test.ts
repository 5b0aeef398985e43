import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Params } from '@recon/protocol';
import { createSandboxClock } from '../../src/clock.ts';
import { createSandbox } from '../../src/sandbox.ts';
import type { Sandbox, SandboxEvent, SandboxOptions } from '../../src/sandbox.ts';
import { postSigned } from '../support/sandbox-harness.ts';
import { readExportFile } from './read-export-file.ts';
import { startUploadReceiver } from './upload-receiver.ts';
import type { UploadReceiver } from './upload-receiver.ts';

/**
 * The CALLBACKURL switches (callback format, lost deliveries, duplicated deliveries), each sandbox built in
 * process and its deliveries received by a real HTTP server on loopback.
 */
const IDENTIFIER = 'SWITCH-SHOP';
const SECRET = 'switch-secret';
const RETRY_ATTEMPTS = 3;

let uploads: UploadReceiver;
const sandboxes: Sandbox[] = [];

beforeAll(async () => {
  uploads = await startUploadReceiver();
});
afterEach(async () => {
  for (const sandbox of sandboxes.splice(0)) await sandbox.close();
});
afterAll(async () => {
  await uploads?.close();
});

interface Started {
  readonly sandbox: Sandbox;
  readonly events: SandboxEvent[];
  getTransactions(params: Params): Promise<Record<string, unknown>>;
  /** The synchronous answer's rows for the same request, to compare a delivered file with. */
  rowsOf(params: Params): Promise<Record<string, string>[]>;
}

async function startSandbox(options: Partial<SandboxOptions>): Promise<Started> {
  const events: SandboxEvent[] = [];
  const sandbox = createSandbox({
    identifier: IDENTIFIER,
    secret: SECRET,
    clock: createSandboxClock({ start: new Date('2026-11-02T06:00:00Z'), ticking: false }),
    seed: 5,
    exportRetry: { attempts: RETRY_ATTEMPTS, baseDelayMs: 10, maxDelayMs: 40 },
    onEvent: (event) => events.push(event),
    ...options,
  });
  sandboxes.push(sandbox);
  const baseUrl = await sandbox.listen(0, '127.0.0.1');
  const getTransactions = (params: Params): Promise<Record<string, unknown>> =>
    postSigned(baseUrl, 'getTransactions', { IDENTIFIER, VERSION: '3.0', ...params }, SECRET);
  return {
    sandbox,
    events,
    getTransactions,
    async rowsOf(params) {
      const answer = await getTransactions(params);
      expect(answer.EXECCODE).toBe('0000');
      return answer.DATA as Record<string, string>[];
    },
  };
}

/** One order's export; `n` picks the order, so deliveries of different requests can be told apart. */
function orderExport(sandbox: Sandbox, n: number, extra: Params = {}): Params {
  return { ORDERID: sandbox.scenario!.orderIds[n]!, COLUMNS: 'ORDERID;TRANSACTIONID;AMOUNT;EXECCODE', ...extra };
}

const FILENAME_BY_TYPE: Record<string, string> = {
  'application/zip': 'x.csv.zip',
  'application/gzip': 'x.csv.gz',
  'application/x-bzip2': 'x.csv.bz2',
  'text/csv; charset=utf-8': 'x.csv',
};

describe('--callback-format raw', () => {
  it.each([
    ['zip', 'application/zip'],
    ['gzip', 'application/gzip'],
    ['bzip', 'application/x-bzip2'],
    [undefined, 'text/csv; charset=utf-8'],
  ])(
    'COMPRESSION=%s: the file is the whole body, typed %s, and a failed attempt is retried',
    async (compression, contentType) => {
      const { sandbox, events, getTransactions, rowsOf } = await startSandbox({ callbackFormat: 'raw' });
      const params = orderExport(sandbox, 0, compression ? { COMPRESSION: compression } : {});
      const expected = await rowsOf(params);
      const before = uploads.received.length;
      uploads.failNext(1);

      const answer = await getTransactions({ ...params, CALLBACKURL: `${uploads.url}/raw` });
      expect(answer).toMatchObject({ EXECCODE: '0000' });
      await sandbox.exports.idle();

      const attempts = uploads.received.slice(before);
      expect(attempts.map((attempt) => [attempt.url, attempt.status])).toEqual([
        ['/raw', 503],
        ['/raw', 200],
      ]);
      const delivered = attempts[1]!;
      expect(delivered.contentType).toBe(contentType);
      expect(delivered.files).toEqual([]);
      expect(delivered.body!.equals(attempts[0]!.body!)).toBe(true);
      const { rows } = await readExportFile(FILENAME_BY_TYPE[contentType]!, delivered.body!);
      expect(rows).toEqual(expected);
      expect(events).toEqual([]);
    },
  );

  it('multipart stays the default', async () => {
    const { sandbox, getTransactions } = await startSandbox({});
    const before = uploads.received.length;
    await getTransactions({ ...orderExport(sandbox, 0), COMPRESSION: 'gzip', CALLBACKURL: `${uploads.url}/mp` });
    await sandbox.exports.idle();
    const [delivered] = uploads.received.slice(before);
    expect(delivered!.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(delivered!.files.map((file) => file.mimeType)).toEqual(['application/gzip']);
    expect(delivered!.fields).toMatchObject({ OPERATIONTYPE: 'getTransactions', IDENTIFIER, ROWS: expect.any(String) });
  });
});

describe('--drop-callbacks N', () => {
  it('loses the first N deliveries of the sandbox, each answered 0000 all the same, and sends the next', async () => {
    const { sandbox, events, getTransactions, rowsOf } = await startSandbox({ dropCallbacks: 2 });
    const before = uploads.received.length;
    for (const n of [0, 1, 2]) {
      const answer = await getTransactions({
        ...orderExport(sandbox, n),
        COMPRESSION: 'gzip',
        CALLBACKURL: `${uploads.url}/drop${n}`,
      });
      expect(answer).toMatchObject({
        EXECCODE: '0000',
        MESSAGE: expect.stringContaining(`will be sent to ${uploads.url}/drop${n}`),
      });
    }
    await sandbox.exports.idle();

    const arrived = uploads.received.slice(before);
    expect(arrived.map((upload) => upload.url)).toEqual(['/drop2']);
    const { rows } = await readExportFile(arrived[0]!.files[0]!.filename, arrived[0]!.files[0]!.bytes);
    expect(rows).toEqual(await rowsOf(orderExport(sandbox, 2)));
    expect(events).toEqual([
      { type: 'export-dropped', label: `to ${uploads.url}/drop0` },
      { type: 'export-dropped', label: `to ${uploads.url}/drop1` },
    ]);
  });

  it('counts per sandbox: another sandbox loses its own first deliveries', async () => {
    const first = await startSandbox({ dropCallbacks: 1 });
    const second = await startSandbox({ dropCallbacks: 1 });
    const before = uploads.received.length;
    for (const [name, started] of [
      ['a', first],
      ['b', second],
      ['c', first],
      ['d', second],
    ] as const) {
      await started.getTransactions({ ...orderExport(started.sandbox, 0), CALLBACKURL: `${uploads.url}/${name}` });
    }
    await first.sandbox.exports.idle();
    await second.sandbox.exports.idle();
    expect(
      uploads.received
        .slice(before)
        .map((upload) => upload.url)
        .sort(),
    ).toEqual(['/c', '/d']);
  });

  it('does not count synchronous exports, only CALLBACKURL deliveries', async () => {
    const { sandbox, getTransactions } = await startSandbox({ dropCallbacks: 1 });
    await getTransactions(orderExport(sandbox, 0));
    const before = uploads.received.length;
    await getTransactions({ ...orderExport(sandbox, 0), CALLBACKURL: `${uploads.url}/lost` });
    await getTransactions({ ...orderExport(sandbox, 0), CALLBACKURL: `${uploads.url}/kept` });
    await sandbox.exports.idle();
    expect(uploads.received.slice(before).map((upload) => upload.url)).toEqual(['/kept']);
  });
});

describe('--duplicate-callbacks', () => {
  it('sends every delivery twice, the same bytes to the same URL', async () => {
    const { sandbox, events, getTransactions } = await startSandbox({ duplicateCallbacks: true });
    const before = uploads.received.length;
    const answer = await getTransactions({
      ...orderExport(sandbox, 3),
      COMPRESSION: 'zip',
      CALLBACKURL: `${uploads.url}/twice`,
    });
    expect(answer.EXECCODE).toBe('0000');
    await sandbox.exports.idle();

    const arrived = uploads.received.slice(before);
    expect(arrived.map((upload) => [upload.url, upload.status])).toEqual([
      ['/twice', 200],
      ['/twice', 200],
    ]);
    const [one, two] = arrived.map((upload) => upload.files[0]!);
    expect(two!.filename).toBe(one!.filename);
    expect(two!.bytes.equals(one!.bytes)).toBe(true);
    expect(arrived[1]!.fields).toEqual(arrived[0]!.fields);
    expect(events).toEqual([]);
  });

  it('sends the second copy only once the first has given up, and reports the first failure', async () => {
    const { sandbox, events, getTransactions } = await startSandbox({
      duplicateCallbacks: true,
      callbackFormat: 'raw',
    });
    const before = uploads.received.length;
    // Every attempt of the first copy fails. Were the copies sent side by side, the second would take some of
    // these failures and both would end up delivered: five requests instead of four.
    uploads.failNext(RETRY_ATTEMPTS);
    await getTransactions({ ...orderExport(sandbox, 3), COMPRESSION: 'gzip', CALLBACKURL: `${uploads.url}/late` });
    await sandbox.exports.idle();

    const arrived = uploads.received.slice(before);
    expect(arrived.map((upload) => upload.status)).toEqual([...Array<number>(RETRY_ATTEMPTS).fill(503), 200]);
    for (const upload of arrived) expect(upload.body!.equals(arrived[0]!.body!)).toBe(true);
    expect(events).toEqual([
      {
        type: 'export-failed',
        label: `to ${uploads.url}/late`,
        error: expect.objectContaining({ message: expect.stringMatching(/HTTP 503/) }),
      },
    ]);
  });

  it('with --drop-callbacks, a lost delivery loses both copies and the next is sent twice', async () => {
    const { sandbox, getTransactions } = await startSandbox({ duplicateCallbacks: true, dropCallbacks: 1 });
    const before = uploads.received.length;
    await getTransactions({ ...orderExport(sandbox, 0), CALLBACKURL: `${uploads.url}/gone` });
    await getTransactions({ ...orderExport(sandbox, 0), CALLBACKURL: `${uploads.url}/dup` });
    await sandbox.exports.idle();
    expect(uploads.received.slice(before).map((upload) => upload.url)).toEqual(['/dup', '/dup']);
  });
});

describe('createSandbox', () => {
  it('refuses a dropCallbacks that is not a whole number of deliveries', () => {
    expect(() => createSandbox({ identifier: IDENTIFIER, secret: SECRET, dropCallbacks: -1 })).toThrow(/dropCallbacks/);
    expect(() => createSandbox({ identifier: IDENTIFIER, secret: SECRET, dropCallbacks: 1.5 })).toThrow(
      /dropCallbacks/,
    );
  });
});
