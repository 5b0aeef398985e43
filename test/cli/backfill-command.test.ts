import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentClient, type PaymentClient } from '../../src/client/payment-client.ts';
import { EXPORT_COLUMNS } from '@recon/protocol';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { answering, startServer } from '../client/loopback-servers.ts';
import { ago, DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { oneProcessPerExitCode, runReconInProcess } from './run-recon.ts';

/**
 * `recon backfill` talking to the sandbox on a loopback port: a subprocess for each exit code's first run in the file
 * (on whichever backend runs first: a process on PGlite opens its database from scratch, seconds of CPU for nothing
 * the exit code depends on), the others in this process.
 */
const variant = oneProcessPerExitCode();
const IDENTIFIER = 'cli-merchant';
const SECRET = 'cli-secret';
const MINUTE = 60_000;

describe('recon backfill', () => {
  let sandbox: Sandbox;
  let client: PaymentClient;
  let serviceEnv: Record<string, string>;
  let tmp: string;

  beforeAll(async () => {
    sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET });
    const baseUrl = await sandbox.listen(0);
    client = createPaymentClient({
      baseUrl,
      identifier: IDENTIFIER,
      secret: SECRET,
      timeoutMs: 5_000,
      retry: { attempts: 1, baseDelayMs: 10 },
    });
    serviceEnv = { RECON_SERVICE_URL: baseUrl, RECON_IDENTIFIER: IDENTIFIER, RECON_SECRET: SECRET };
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-backfill-cli-'));
  });
  afterAll(async () => {
    await sandbox?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function pay(orderId: string, amount: bigint): Promise<void> {
    const answer = await client.payment({
      ORDERID: orderId,
      AMOUNT: amount,
      CLIENTIDENT: 'client-1',
      CLIENTEMAIL: 'jane@example.com',
      CLIENTUSERAGENT: 'Mozilla/5.0',
      CLIENTIP: '192.0.2.10',
      DESCRIPTION: 'a lamp',
    });
    expect(sandbox.finishCardholderStep(answer.TRANSACTIONID!, 'validated').ok).toBe(true);
  }

  const expectOneLine = (stderr: string) => expect(stderr.trimEnd().split('\n')).toHaveLength(1);

  describe('refuses before touching a database', () => {
    const env = { RECON_DATA_DIR: '/nonexistent/recon-backfill' };

    it('a missing service variable, naming it in one line (exit 1)', async () => {
      for (const [missing, present] of [
        ['RECON_SERVICE_URL', { RECON_IDENTIFIER: IDENTIFIER, RECON_SECRET: SECRET }],
        ['RECON_SECRET', { RECON_SERVICE_URL: 'http://127.0.0.1:9', RECON_IDENTIFIER: IDENTIFIER }],
      ] as const) {
        const result = await variant(['backfill', '--order-id', 'ORD-1'], { ...env, ...present }, 1);
        expect(result.code).toBe(1);
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(new RegExp(`^recon backfill: environment variable ${missing} is not set: `));
        expectOneLine(result.stderr);
      }
    });

    it('no ORDERID, or a bad one on the command line or in --orders-file, naming where (exit 1)', async () => {
      const file = path.join(tmp, 'bad-ids.txt');
      await writeFile(file, '# ticket 42\nORD-1\n\nORD;2\n');
      const empty = path.join(tmp, 'no-ids.txt');
      await writeFile(empty, '# nothing yet\n');
      for (const [args, message] of [
        [[], /^recon backfill: no ORDERID given: --order-id ID or --orders-file FILE/],
        [['--orders-file', empty], /no ORDERID given \(.*no-ids\.txt lists none\)/],
        [['--order-id', 'x'.repeat(41)], /^recon backfill: --order-id: ORDERID "x{41}" is not 1-40 characters$/],
        [['--orders-file', file], /^recon backfill: .*bad-ids\.txt:4: ORDERID "ORD;2" contains ";"/],
        [
          ['--orders-file', path.join(tmp, 'absent.txt')],
          /^recon backfill: --orders-file .*absent\.txt: cannot read it \(ENOENT\)$/,
        ],
      ] as const) {
        const result = await variant(['backfill', ...args], { ...env, ...serviceEnv }, 1);
        expect(result.code, args.join(' ')).toBe(1);
        expect(result.stdout).toBe('');
        expect(result.stderr.trimEnd()).toMatch(message);
        expectOneLine(result.stderr);
      }
    });
  });

  describe.each(BACKENDS)('on %s', (backend) => {
    const skip = backend === 'postgres' && !hasPostgres;
    let testDb: TestDatabase;
    const paid = `cli-paid-${backend}`;
    const fresh = `cli-fresh-${backend}`;
    beforeAll(async () => {
      if (skip) return;
      testDb = await createTestDatabase(backend);
      await pay(paid, 9000n);
      const now = new Date();
      await insertOrders(testDb.database, [
        { id: paid, amount: 9000n, status: 'paid', createdAt: ago(now, 2 * DAY) },
        { id: fresh, amount: 500n, status: 'paid', createdAt: ago(now, 10 * MINUTE) },
      ]);
      // A PGlite directory is opened by one process at a time: the CLI's, while it runs.
      await testDb.close();
    });
    afterAll(async () => testDb?.drop());

    const backfillCli = (args: string[], env: Record<string, string> = serviceEnv) =>
      runReconInProcess(['backfill', ...args], { ...testDb.env, ...env });
    const backfillExiting = (code: number, args: string[], env: Record<string, string> = serviceEnv) =>
      variant(['backfill', ...args], { ...testDb.env, ...env }, code);

    it.skipIf(skip)(
      "prints the request, the run and each order's verdict, notes a young order's possible lag, and exits 0",
      async () => {
        const result = await backfillExiting(0, ['--order-id', paid, '--order-id', fresh, '--order-id', 'cli-nobody']);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        const lines = result.stdout.split('\n');
        expect(lines.slice(0, 3)).toEqual([
          expect.stringMatching(
            new RegExp(
              `^backfill:getTransactions \\S+Z ${paid};${fresh};cli-nobody: loaded rows=1 inserted=1 updated=0 unchanged=0 rejected=0$`,
            ),
          ),
          expect.stringMatching(/^run \d+ as of \S+: 2 verdicts: pending=1 matched=1$/),
          '',
        ]);
        expect(lines[3]).toMatch(/^order id +status +lifecycle +expected +settled +delta +currency +reason$/);
        expect(lines[5]).toMatch(
          new RegExp(
            `^${paid} +matched +90\\.00 +90\\.00 +0\\.00 +EUR +settled 90\\.00 EUR equals the expected 90\\.00 EUR$`,
          ),
        );
        expect(lines[6]).toMatch(
          new RegExp(
            `^${fresh} +pending +5\\.00 +0\\.00 +-5\\.00 +EUR +awaiting its payment or capture: created .*, within the grace period of 24 hours$`,
          ),
        );
        expect(lines.slice(7)).toEqual([
          '',
          `note: ${fresh} was created 10 minutes ago and the service returned no transaction for it: its export may lag behind very recent operations, so backfill it again later before taking it as missing`,
          'not found (no order, no succeeded transaction): cli-nobody',
          '',
        ]);
      },
    );

    it.skipIf(skip)(
      'repeated, says the answer was loaded before, judges the order again and exits 0; --json is one object',
      async () => {
        const first = JSON.parse((await backfillCli(['--order-id', paid, '--json'])).stdout);
        const again = await backfillCli(['--order-id', paid, '--json']);
        expect(again.code).toBe(0);
        const second = JSON.parse(again.stdout);
        expect(second.requests).toEqual([
          expect.objectContaining({ status: 'duplicate', fileId: first.requests[0].fileId, orderIds: [paid] }),
        ]);
        expect(Number(second.run.runId)).toBeGreaterThan(Number(first.run.runId));
        expect(second.verdicts).toEqual([
          expect.objectContaining({
            orderId: paid,
            status: 'matched',
            expectedMinor: '9000',
            settledMinor: '9000',
            currency: 'EUR',
            // Judged again and found the same: the verdict still holds from the run that found it.
            runId: first.verdicts[0].runId,
            lagNote: null,
          }),
        ]);

        const text = await backfillCli(['--order-id', paid]);
        expect(text.stdout.split('\n')[0]).toMatch(
          new RegExp(
            `^backfill:getTransactions \\S+Z ${paid}: duplicate of file ${first.requests[0].fileId}, nothing changed$`,
          ),
        );
      },
    );

    it.skipIf(skip)(
      'takes --order-id A,B as one ORDERID, as a comma may be part of one, and warns that several are given by repeating it',
      async () => {
        const result = await backfillCli(['--order-id', `${paid},cli-second`, '--json']);
        expect(result.code).toBe(0);
        expect(result.stderr).toBe(
          `recon backfill: warning: --order-id '${paid},cli-second' is taken as one ORDERID (a comma may be part of one); for several orders, repeat --order-id\n`,
        );
        const output = JSON.parse(result.stdout);
        expect(output.requests.map((request: { orderIds: string[] }) => request.orderIds)).toEqual([
          [`${paid},cli-second`],
        ]);
        expect(output.run).toMatchObject({ kind: 'backfill', description: '1 order' });
      },
    );

    it.skipIf(skip)(
      'merges --orders-file with --order-id, each id asked once, RECON_EXPORT_BATCH_SIZE per request',
      async () => {
        const file = path.join(tmp, `ids-${backend}.txt`);
        await writeFile(file, `# from the ticket\n${fresh}\r\n\n  ${paid}  \ncli-other\n`);
        const result = await backfillCli(['--order-id', paid, '--orders-file', file, '--json'], {
          ...serviceEnv,
          RECON_EXPORT_BATCH_SIZE: '2',
        });
        expect(result.code).toBe(0);
        const output = JSON.parse(result.stdout);
        expect(output.requests.map((request: { orderIds: string[] }) => request.orderIds)).toEqual([
          [paid, fresh],
          ['cli-other'],
        ]);
        // The run says what it was, and counts its orders rather than listing them.
        expect(output.run).toMatchObject({
          kind: 'backfill',
          description: '3 orders',
          scope: { kind: 'orders', count: 3 },
        });
      },
    );

    it.skipIf(skip)(
      'exits 3 when the service answered rows the normalizer rejects, the rest loaded and reconciled',
      async () => {
        const row = Object.fromEntries(EXPORT_COLUMNS.map((column) => [column, '']));
        const bad = {
          ...row,
          TRANSACTIONID: `cli-bad-${backend}`,
          ORDERID: paid,
          OPERATIONTYPE: 'payment',
          AMOUNT: 'ninety',
          CURRENCY: 'EUR',
          EXECCODE: '0',
        };
        const server = await startServer(
          answering({ OPERATIONTYPE: 'getTransactions', EXECCODE: '0000', MESSAGE: 'ok', DATA: [bad] }),
        );
        try {
          const result = await backfillExiting(3, ['--order-id', paid], {
            ...serviceEnv,
            RECON_SERVICE_URL: server.baseUrl,
          });
          expect(result.code).toBe(3);
          expect(result.stdout).toMatch(/: loaded rows=1 inserted=0 updated=0 unchanged=0 rejected=1\n/);
          expect(result.stdout).toContain(`${paid} `);
        } finally {
          await server.close();
        }
      },
    );

    it.skipIf(skip)('says in one line that the service cannot be reached and exits 2', async () => {
      const { baseUrl } = await refusingBaseUrl();
      const result = await backfillExiting(2, ['--order-id', paid], { ...serviceEnv, RECON_SERVICE_URL: baseUrl });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        /^recon backfill: http:\/\/127\.0\.0\.1:\d+\/front\/service\/rest\/export: connection refused\n$/,
      );
    });
  });
});
