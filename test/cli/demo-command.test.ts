import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runRecon } from './run-recon.ts';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recon-demo-'));
});
afterAll(async () => rm(dataDir, { recursive: true, force: true }));

// What `npm start` runs. DATABASE_URL points nowhere on purpose: the demo always uses the embedded database.
const demo = () => runRecon(['demo'], { RECON_DATA_DIR: dataDir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nothing' });

it('loads the sample exports on a fresh machine, and finds them all loaded on a second run; both exit 0', async () => {
  const first = await demo();
  expect(first.stderr).toBe('');
  expect(first.code).toBe(0);
  const summaries = first.stdout.split('\n').filter((line) => line.startsWith('fixtures/'));
  expect(summaries).toHaveLength(10);
  expect(summaries).toContain('fixtures/newer-export.csv: loaded rows=10 inserted=0 updated=3 unchanged=7 rejected=0');
  expect(summaries).toContain('fixtures/bad-rows.csv: loaded rows=13 inserted=6 updated=0 unchanged=0 rejected=7');
  expect(first.stdout).toContain(path.join(dataDir, 'pgdata'));
  expect(first.stdout).toMatch(/TRANSACTIONID +OCCURRED \(UTC\) +AMOUNT \(minor\)/);
  expect(first.stdout).toMatch(/A2000001 +2024-03-02T05:17:13Z +11539 +EUR +0000/);
  expect(first.stdout).toMatch(/bad-rows\.csv +3 +EXECCODE: "12345"/);

  const second = await demo();
  expect(second.code).toBe(0);
  const again = second.stdout.split('\n').filter((line) => line.startsWith('fixtures/'));
  expect(again).toHaveLength(10);
  expect(again.every((line) => / duplicate of file \d+, nothing changed$/.test(line))).toBe(true);
});
