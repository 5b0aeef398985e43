import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import { EXPORT_COLUMNS } from '@recon/protocol';
import { createSandbox, createSandboxClock, type Sandbox } from '@recon/sandbox';
import { startUploadReceiver, type UploadReceiver } from '../../packages/sandbox/test/export/upload-receiver.ts';
import {
  answerCardholderPage,
  cardholderPageUrl,
  postSigned,
  walletParams,
} from '../../packages/sandbox/test/support/sandbox-harness.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * An export with columns beyond the documented record (NATURE, CHARGEBACKDATE, TRANSFER REFERENCE,
 * EXTRADATA) and one the service does not know, asked in mixed case, is ingested whole: every row loads, the
 * documented columns fill their fields, and the others land in `extra` under their header names.
 */
const IDENTIFIER = 'LATER-COLUMNS';
const SECRET = 'later-columns';
const EXTRADATA = 'basket=42;note="gift"';
const LATER = ['nature', 'ChargebackDate', 'TRANSFER REFERENCE', 'extradata', 'FOO'];

describe('an export with later and unknown columns, ingested', () => {
  let sandbox: Sandbox;
  let uploads: UploadReceiver;
  let workDir: string;
  let exportFile: string;
  let paidWithExtra: string;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'recon-later-columns-'));
    uploads = await startUploadReceiver();
    sandbox = createSandbox({
      identifier: IDENTIFIER,
      secret: SECRET,
      seed: 4,
      clock: createSandboxClock({ start: new Date('2026-10-01T10:00:00Z'), ticking: false }),
    });
    const baseUrl = await sandbox.listen(0);
    const payment = await postSigned(
      baseUrl,
      'payment',
      walletParams({ IDENTIFIER, ORDERID: 'EXTRA-1', EXTRADATA }),
      SECRET,
    );
    await answerCardholderPage(cardholderPageUrl(payment), 'validated');
    paidWithExtra = payment['TRANSACTIONID']!;

    const orderIds = [...sandbox.scenario!.orderIds, 'EXTRA-1'].join(';');
    const columns = [...EXPORT_COLUMNS, ...LATER].join(';');
    const answer = await postSigned(
      baseUrl,
      'getTransactions',
      {
        IDENTIFIER,
        VERSION: '3.0',
        ORDERID: orderIds,
        COLUMNS: columns,
        COMPRESSION: 'ZIP',
        CALLBACKURL: `${uploads.url}/later`,
      },
      SECRET,
    );
    expect(answer.EXECCODE).toBe('0000');
    await sandbox.exports.idle();
    const file = uploads.received.at(-1)!.files[0]!;
    exportFile = path.join(workDir, file.filename);
    await writeFile(exportFile, file.bytes);
  });

  afterAll(async () => {
    await sandbox?.close();
    await uploads?.close();
    await rm(workDir, { recursive: true, force: true });
  });

  describe.each(BACKENDS)('on %s', (backend) => {
    const skip = backend === 'postgres' && !hasPostgres;
    let testDb: TestDatabase;
    beforeAll(async () => {
      if (!skip) testDb = await createTestDatabase(backend);
    });
    afterAll(async () => testDb?.drop());

    it.skipIf(skip)(
      'loads every row, the later and unknown columns in extra under the names the file gives them',
      async () => {
        const transactions = sandbox.store.all();
        const [result] = await ingestFiles(testDb.database, [exportFile], {
          timezone: 'UTC',
          limits: loadConfig({}).limits,
        });
        expect(result).toMatchObject({
          status: 'loaded',
          compression: 'zip',
          rows: transactions.length,
          inserted: transactions.length,
          rejected: 0,
        });

        const rows = await testDb.database.db
          .selectFrom('recon.transactions')
          .select(['transaction_id', 'amount_minor', 'extra'])
          .execute();
        expect(rows).toHaveLength(transactions.length);
        const blank = { NATURE: '', CHARGEBACKDATE: '', 'TRANSFER REFERENCE': '', EXTRADATA: '', FOO: '' };
        for (const row of rows) {
          const recorded = sandbox.store.get(row.transaction_id)!;
          expect(BigInt(row.amount_minor!)).toBe(recorded.amount);
          expect(row.extra).toEqual(row.transaction_id === paidWithExtra ? { ...blank, EXTRADATA } : blank);
        }
      },
    );
  });
});
