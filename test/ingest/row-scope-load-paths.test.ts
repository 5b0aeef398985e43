import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { fillFileAccount } from '../../src/ingest/file-account.ts';
import type { IngestOptions } from '../../src/ingest/ingest-options.ts';
import {
  ACCOUNT_NOT_ASKED,
  ORDERID_NOT_ASKED,
  requestScope,
  type RequestScope,
} from '../../src/normalize/row-scope.ts';
import { zipArchive } from '../../scripts/zip-archive.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const limits = loadConfig({}).limits;
const NAMED = 'IDENTIFIER;TRANSACTIONID;ORDERID;DATE;AMOUNT;CURRENCY;EXECCODE';
const UNNAMED = 'TRANSACTIONID;ORDERID;DATE;AMOUNT;CURRENCY;EXECCODE';
const row = (account: string, id: string, order: string, amount: string, code = '0000') =>
  `${account};${id};${order};2024-05-01 12:00:00;${amount};EUR;${code}`;
const unnamed = (id: string, order: string, amount: string) => `${id};${order};2024-05-01 12:00:00;${amount};EUR;0000`;
const csv = (header: string, lines: string[]) => Buffer.from([header, ...lines].join('\n') + '\n');
const range = (count: number, from = 1) => Array.from({ length: count }, (_, i) => from + i);

/** B's export, named and unnamed; a transaction of no known account; then what A's tokens receive. */
const bNamed = range(30).map((n) => row('shop-b', `TB${n}`, `OB${n}`, `${n}.00`));
const bUnnamed = range(10, 31).map((n) => unnamed(`TB${n}`, `OB${n}`, `${n}.00`));
const aOwn = range(40).map((n) => row('shop-a', `TA${n}`, `OA${n}`, `${n}.50`));

/** What A's request named: A's orders, B's (every account is asked about every ORDERID) and the legacy one. */
const A_ORDERS = [...range(40).map((n) => `OA${n}`), ...range(40).map((n) => `OB${n}`), 'ON1'];
const scopeOf = (account: string, orderIds: string[]): RequestScope =>
  requestScope({ accounts: [account], scope: 'CLIENT', orderIds });

/**
 * The lines of A's file that A's request did not ask for, or that would change B's money, each with where it
 * stands: spread over the chunks (of 4 rows, see the test) so that some meet a staged chunk, some a chunk going
 * straight into recon.transactions, some the file's last merge.
 */
const foreign = {
  bChanged: row('shop-b', 'TB2', 'OB2', '1.00', '4001'),
  bAsStored: bNamed[4]!,
  unknownAccount: row('shop-evil', 'TE1', 'OA1', '500.00'),
  relabelled: row('shop-a', 'TB3', 'OB3', '1.00', '4001'),
  unnamedOfB: row('', 'TB4', 'OB4', '1.00', '4001'),
  otherOrder: row('shop-a', 'TA99', 'OX1', '9.00'),
  unknownBefore: row('shop-evil', 'TA2', 'OA2', '2.50'),
} as const;
const aFile = [
  ...aOwn.slice(0, 10),
  foreign.bChanged,
  ...aOwn.slice(10, 14),
  foreign.relabelled,
  ...aOwn.slice(14, 20),
  foreign.unknownAccount,
  foreign.bAsStored,
  ...aOwn.slice(20, 30),
  foreign.unnamedOfB,
  foreign.otherOrder,
  // A's row of a transaction of no known account: it may change it.
  row('shop-a', 'TN1', 'ON1', '11.11'),
  ...aOwn.slice(30),
];

function files(): Record<string, Buffer> {
  return {
    'b.csv': csv(NAMED, bNamed),
    'b-unnamed.csv': csv(UNNAMED, bUnnamed),
    'legacy.csv': csv(UNNAMED, [unnamed('TN1', 'ON1', '1.00'), unnamed('TN2', 'ON2', '2.00')]),
    'a.csv': csv(NAMED, aFile),
    // Sent again, to a request that did not name OA40: A's rows as stored, with B's rows as B's files wrote them,
    // byte for byte under the same headers, and an unknown account's row of TA2 before A's. Mostly loaded already,
    // and most foreign records equal to their stored rows.
    'a-again.zip': zipArchive([
      { name: 'named.csv', data: csv(NAMED, [foreign.unknownBefore, ...aOwn, bNamed[6]!, bNamed[7]!]) },
      { name: 'unnamed.csv', data: csv(UNNAMED, bUnnamed.slice(0, 3)) },
    ]),
    // A's rows alone, as stored: nothing to load.
    'a-unchanged.csv': csv(NAMED, aOwn),
  };
}

/** Each load path of docs/architecture.md, chosen through the options that set its thresholds. */
const PATHS: Record<string, Partial<IngestOptions>> = {
  'whole-file': { changedRowsFirstMinBytes: Number.POSITIVE_INFINITY, chunkRows: Number.POSITIVE_INFINITY },
  // A read-ahead of one byte and chunks of 4: after the first chunk proves new, the next go straight into the table,
  // and the relabelled row's stored id fails one, which sends the rest of the file through staging.
  chunks: { changedRowsFirstMinBytes: Number.POSITIVE_INFINITY, chunkRows: 4, readAheadBytes: 1 },
  'check-first-ids, changed-rows-first, nothing-changed': {
    changedRowsFirstMinBytes: 0,
    chunkRows: Number.POSITIVE_INFINITY,
  },
  'changed-rows-first in chunks': { changedRowsFirstMinBytes: 0, chunkRows: 4, readAheadBytes: 1 },
};

/**
 * A file may write only what its request asked for, whichever way it loads: the rows of the other account, of an
 * unknown one, of an ORDERID not asked, and the rows that would change another account's stored transaction are
 * rejected, with the same rows, rejected rows and counts on every path as when the file loads whole.
 */
describe.each(BACKENDS)('the scope of a file on every load path, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  const databases: Record<string, TestDatabase> = {};
  let dir: string;
  let paths: Record<string, string>;

  beforeAll(async () => {
    if (skip) return;
    for (const name of Object.keys(PATHS)) databases[name] = await createTestDatabase(backend);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-scope-paths-'));
    paths = {};
    for (const [name, data] of Object.entries(files())) {
      paths[name] = path.join(dir, name);
      await writeFile(paths[name], data);
    }
  });
  afterAll(async () => {
    await Promise.all(Object.values(databases).map((testDb) => testDb.drop()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Loads `name` as a delivery on a token of `account` (the unnamed rows of its own export take its account). */
  const ingest = async (
    database: Database,
    name: string,
    loadPath: Partial<IngestOptions>,
    request?: { account: string; orderIds: string[] },
  ) => {
    const phases = new Set<string>();
    const [result] = await ingestFiles(database, [paths[name]!], {
      timezone: 'UTC',
      limits,
      ...loadPath,
      ...(request && {
        scope: scopeOf(request.account, request.orderIds),
        beforeCommit: (connection, loaded) => fillFileAccount(connection.db, loaded.fileId, request.account),
      }),
      onProgress: (progress) => phases.add(progress.phase),
    });
    const {
      file: _file,
      fileId: _fileId,
      sha256: _sha256,
      ...counts
    } = result as Extract<typeof result, { status: 'loaded' }>;
    return { counts, phases };
  };
  const tables = async (database: Database) => {
    const names = new Map(
      (await database.db.selectFrom('recon.files').select(['file_id', 'name']).execute()).map((f) => [
        f.file_id,
        path.basename(f.name),
      ]),
    );
    const transactions = await database.db
      .selectFrom('recon.transactions')
      .selectAll()
      .orderBy('transaction_id')
      .execute();
    const rejected = await database.db
      .selectFrom('recon.rejected_rows')
      .select(['file_id', 'entry', 'line', 'raw', 'reason'])
      .orderBy('file_id')
      .orderBy('entry')
      .orderBy('line')
      .execute();
    return {
      transactions: transactions.map(({ updated_at: _updatedAt, file_id, ...kept }) => ({
        ...kept,
        file: names.get(file_id),
      })),
      rejected: rejected.map(({ file_id, ...kept }) => ({ ...kept, file: names.get(file_id) })),
    };
  };

  it.skipIf(skip)(
    "keeps every file off the other account's transactions, with the rows, counts and rejected rows of a whole load",
    async () => {
      const loads: Record<string, Awaited<ReturnType<typeof ingest>>[]> = {};
      const ended: Record<string, Awaited<ReturnType<typeof tables>>> = {};
      for (const [name, loadPath] of Object.entries(PATHS)) {
        const { database } = databases[name]!;
        const bOrders = range(40).map((n) => `OB${n}`);
        await ingest(database, 'b.csv', loadPath, { account: 'shop-b', orderIds: bOrders });
        await ingest(database, 'b-unnamed.csv', loadPath, { account: 'shop-b', orderIds: bOrders });
        await ingest(database, 'legacy.csv', loadPath);
        const bStored = (await tables(database)).transactions.filter((t) => t.identifier === 'shop-b');
        expect(bStored).toHaveLength(40);
        const request = { account: 'shop-a', orderIds: A_ORDERS };
        loads[name] = [
          await ingest(database, 'a.csv', loadPath, request),
          await ingest(database, 'a-again.zip', loadPath, {
            ...request,
            orderIds: A_ORDERS.filter((order) => order !== 'OA40'),
          }),
          await ingest(database, 'a-unchanged.csv', loadPath, request),
        ];
        ended[name] = await tables(database);
        // Nothing of B's changed: not its values, not its lineage.
        expect(
          ended[name].transactions.filter((t) => t.identifier === 'shop-b'),
          name,
        ).toEqual(bStored);
      }

      const whole = ended['whole-file']!;
      expect(whole.rejected.filter((r) => r.file !== 'b.csv' && r.file !== 'b-unnamed.csv')).toEqual([
        { entry: null, line: 12, raw: foreign.bChanged, reason: ACCOUNT_NOT_ASKED, file: 'a.csv' },
        { entry: null, line: 17, raw: foreign.relabelled, reason: ACCOUNT_NOT_ASKED, file: 'a.csv' },
        { entry: null, line: 24, raw: foreign.unknownAccount, reason: ACCOUNT_NOT_ASKED, file: 'a.csv' },
        { entry: null, line: 25, raw: foreign.bAsStored, reason: ACCOUNT_NOT_ASKED, file: 'a.csv' },
        { entry: null, line: 36, raw: foreign.unnamedOfB, reason: ACCOUNT_NOT_ASKED, file: 'a.csv' },
        { entry: null, line: 37, raw: foreign.otherOrder, reason: ORDERID_NOT_ASKED, file: 'a.csv' },
        { entry: 'named.csv', line: 2, raw: foreign.unknownBefore, reason: ACCOUNT_NOT_ASKED, file: 'a-again.zip' },
        { entry: 'named.csv', line: 42, raw: aOwn[39], reason: ORDERID_NOT_ASKED, file: 'a-again.zip' },
        { entry: 'named.csv', line: 43, raw: bNamed[6], reason: ACCOUNT_NOT_ASKED, file: 'a-again.zip' },
        { entry: 'named.csv', line: 44, raw: bNamed[7], reason: ACCOUNT_NOT_ASKED, file: 'a-again.zip' },
        ...[2, 3, 4].map((line) => ({
          entry: 'unnamed.csv',
          line,
          raw: bUnnamed[line - 2],
          reason: ACCOUNT_NOT_ASKED,
          file: 'a-again.zip',
        })),
      ]);
      expect(loads['whole-file']!.map((load) => load.counts)).toEqual([
        expect.objectContaining({ rows: 47, inserted: 40, updated: 1, unchanged: 0, rejected: 6 }),
        expect.objectContaining({ rows: 46, inserted: 0, updated: 0, unchanged: 39, rejected: 7, superseded: 0 }),
        expect.objectContaining({ rows: 40, inserted: 0, updated: 0, unchanged: 40, rejected: 0 }),
      ]);
      // The transaction of no known account took A's row; the unknown account and the ORDERID not asked left nothing.
      expect(whole.transactions.find((t) => t.transaction_id === 'TN1')).toMatchObject({
        identifier: 'shop-a',
        amount_minor: '1111',
        file: 'a.csv',
      });
      expect(whole.transactions.map((t) => t.transaction_id)).not.toContain('TE1');
      expect(whole.transactions.map((t) => t.transaction_id)).not.toContain('TA99');

      for (const name of Object.keys(PATHS)) {
        expect(ended[name], name).toEqual(whole);
        expect(
          loads[name]!.map((load) => load.counts),
          name,
        ).toEqual(loads['whole-file']!.map((load) => load.counts));
      }
      // The file sent again was checked first, then only its foreign lines loaded; A's rows alone stage nothing.
      const checked = loads['check-first-ids, changed-rows-first, nothing-changed']!;
      expect(checked[1]!.phases).toEqual(new Set(['checking', 'reading', 'merging']));
      expect(checked[2]!.phases).toEqual(new Set(['checking', 'merging']));
    },
  );
});
