import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const config = loadConfig({ RECON_TIMEZONE: 'Europe/Paris' });

/** Europe/Paris jumps from 02:00 CET to 03:00 CEST (01:00Z) on the last Sunday of March. */
const SPRING_DAYS = ['2024-03-31', '2025-03-30', '2026-03-29'];
/** ...and goes back from 03:00 CEST to 02:00 CET (01:00Z) on the last Sunday of October. */
const AUTUMN_DAYS = ['2022-10-30', '2023-10-29', '2027-10-31', '2028-10-29'];

/** Wall time of the change day -> the instant (UTC) the normalizer documents for it. */
const spring = (day: string): [string, string][] => [
  [`${day} 01:59:59`, `${day} 00:59:59`],
  // In the gap: moved forward by its hour, i.e. read with the winter offset.
  [`${day} 02:00:00`, `${day} 01:00:00`],
  [`${day} 02:30:00`, `${day} 01:30:00`],
  [`${day} 02:59:59`, `${day} 01:59:59`],
  [`${day} 03:00:00`, `${day} 01:00:00`],
];
const autumn = (day: string, dayBefore: string): [string, string][] => [
  [`${day} 01:59:59`, `${dayBefore} 23:59:59`],
  // In the repeated hour: its first occurrence, still with the summer offset.
  [`${day} 02:00:00`, `${day} 00:00:00`],
  [`${day} 02:30:00`, `${day} 00:30:00`],
  [`${day} 02:59:59`, `${day} 00:59:59`],
  [`${day} 03:00:00`, `${day} 02:00:00`],
];
const dayBefore = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

const CASES: [string, string][] = [
  ...SPRING_DAYS.flatMap(spring),
  ...AUTUMN_DAYS.flatMap((day) => autumn(day, dayBefore(day))),
];

describe.each(BACKENDS)(
  'DATE wall times of the EU change days on the 29th-31st, through the database on %s',
  (backend) => {
    const skip = backend === 'postgres' && !hasPostgres;
    let testDb: TestDatabase;
    let tmp: string;
    beforeAll(async () => {
      if (skip) return;
      testDb = await createTestDatabase(backend);
      tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-dst-'));
    });
    afterAll(async () => {
      await testDb?.drop();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    it.skipIf(skip)(
      'stores a time in the gap moved forward by the gap, and a repeated time as its first occurrence',
      async () => {
        const ids = CASES.map((_, index) => `DST${String(index).padStart(3, '0')}`);
        const file = path.join(tmp, 'paris-change-days.csv');
        await writeFile(
          file,
          `TRANSACTIONID;DATE\n${CASES.map(([wall], index) => `${ids[index]};${wall}`).join('\n')}\n`,
        );

        const [result] = await ingestFiles(testDb.database, [file], {
          timezone: config.timezone,
          limits: config.limits,
        });
        expect(result).toMatchObject({ status: 'loaded', rows: CASES.length, inserted: CASES.length, rejected: 0 });

        const rows = await testDb.database.db
          .selectFrom('recon.transactions')
          .select([
            'transaction_id',
            sql<string>`to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`.as('utc'),
          ])
          .where('transaction_id', 'in', ids)
          .orderBy('transaction_id')
          .execute();
        expect(rows.map((row) => [CASES[ids.indexOf(row.transaction_id)]![0], row.utc])).toEqual(CASES);
      },
    );
  },
);
