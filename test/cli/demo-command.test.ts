import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runRecon, runReconInProcess } from './run-recon.ts';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'recon-demo-'));
});
afterAll(async () => rm(dataDir, { recursive: true, force: true }));

// What `npm start` runs. DATABASE_URL points nowhere on purpose: the demo always uses the embedded database. The
// first round is a real process, as `npm start` starts it; the second, which checks the start from scratch, runs in
// this one (a process on PGlite opens its database from scratch: seconds of CPU for nothing the demo's output shows).
const demo = (round: number) =>
  (round === 1 ? runRecon : runReconInProcess)(['demo', '--orders', '150', '--seed', '3'], {
    RECON_DATA_DIR: dataDir,
    DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nothing',
  });

// Two whole demos, each opening a new embedded database: seconds apiece, many more on a busy machine.
it('runs one nightly run end to end on the embedded database and the in-process sandbox, twice from scratch', async () => {
  for (let round = 1; round <= 2; round++) {
    const result = await demo(round);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const demoDir = path.join(dataDir, 'demo');
    expect(result.stdout).toContain(`(embedded database ${demoDir})`);
    // A fresh database each time: always run 1, reconciled, every batch's export ingested. Its 150 ORDERIDs are the
    // merchant's 149 orders and the one the books lack, which only its notifications name.
    expect(result.stdout).toMatch(
      /^\d{4}-\d{2}-\d{2} {2}run 1 {2}reconciled {2}orders 150 in 1 batch\(es\); requests: 1 ingested, reconciliation run 1$/m,
    );
    expect(result.stdout).toMatch(/^Reconciliation run 1: nightly run of \d{4}-\d{2}-\d{2}: 150 orders, as of /m);
    expect(result.stdout).toMatch(/^150 verdicts: \d+ matched, \d+ pending, \d+ open exceptions/m);
    expect(result.stdout).toMatch(/^EUR +\d+ +1 +[\d,.]+ +[\d,.]+ +[\d,.-]+ +[\d,.]+( \(\+\d+ unknown\))?$/m);
    for (const status of [
      'currency_mismatch',
      'status_mismatch',
      'amount_mismatch',
      'missing_at_provider',
      'unknown_order',
    ]) {
      expect(result.stdout).toMatch(new RegExp(`^${status} +1 +exception$`, 'm'));
    }
    // Two accounts, one per method, in one group: the report's section of what each settled for the run's orders.
    expect(result.stdout).toMatch(/^Settled per account /m);
    for (const account of ['sandbox-instalment', 'sandbox-wallet']) {
      expect(result.stdout).toMatch(
        new RegExp(`^${account} +sandbox-shop +EUR +\\d+ +\\d+ +[\\d,.]+ +[\\d,.]+ +[\\d,.-]+$`, 'm'),
      );
    }
    const html = result.stdout.match(/^html report: (.+)$/m)![1]!;
    expect(html).toBe(path.join(demoDir, 'report.html'));
    await access(html);
    expect(await readFile(html, 'utf8')).toContain('<svg');
    // From scratch: what the first round left in the embedded database's folder is gone after the second. A run of
    // the same seed on the same day shows the same output either way, so the output alone cannot tell.
    const leftOver = path.join(demoDir, 'left-by-round-1');
    if (round === 1) await writeFile(leftOver, '');
    else await expect(access(leftOver)).rejects.toThrow();
  }
}, 120_000);
