import { loadConfig } from '../../src/config/config.ts';
import { ReconError } from '../../src/errors.ts';
import { formatNightlyRun } from '../../src/nightly/nightly-run-report.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';
import { loadSandboxPackage } from '../sandbox-package.ts';

const USAGE = `usage: recon demo [--orders N] [--seed N]

The nightly flow end to end on this machine, nothing to install or configure (what npm start runs): a fresh
embedded database under RECON_DATA_DIR/demo (default ./.recon/demo), the sandbox of the payment service in this
process with a seeded scenario on two accounts (instalment and wallet, one group), the merchant's orders imported (a deliberate mistake of every kind among them),
the receiver on a loopback port, a worker, one nightly run through real HTTP callbacks and gzip files; then the
reconciliation report, what each account settled, and the path of the html report. DATABASE_URL is ignored: a demo never writes into a
real server.

options:
  --orders N   orders in the scenario (default 2000)
  --seed N     the scenario's seed (default 1)
`;

export const OPTIONS = {
  orders: { type: 'string', default: '2000' },
  seed: { type: 'string', default: '1' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const orders = wholeNumber('--orders', values.orders, 20, 100_000);
  const seed = wholeNumber('--seed', values.seed, 0, 2 ** 32 - 1);
  const config = loadConfig(ctx.env);
  const tty = Boolean(ctx.stderr.isTTY);
  const started = performance.now();
  // The demo runs the sandbox in this process: loaded only now, so that its absence is said in one line.
  await loadSandboxPackage('recon demo');
  const { runDemo } = await import('../../pipelines/demo.ts');
  const result = await runDemo({
    config,
    orders,
    seed,
    signal: ctx.signal,
    onProgress: tty ? (message) => ctx.stderr.write(`\x1b[2Krecon demo: ${message}\r`) : undefined,
  });
  if (tty) ctx.stderr.write('\x1b[2K');
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  ctx.stdout.write(
    [
      `recon demo: one nightly run end to end in ${seconds} s (embedded database ${result.databaseDir})`,
      formatNightlyRun(result.run),
      '',
      result.report.trimEnd(),
      '',
      `html report: ${result.htmlReport}`,
      '',
    ].join('\n'),
  );
  return result.run.state === 'reconciled' ? EXIT.ok : EXIT.failed;
}

function wholeNumber(option: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    throw new ReconError('USAGE', `${option}: expected a whole number from ${min} to ${max}, got '${text}'`);
  return value;
}
