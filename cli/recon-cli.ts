/** The command line: each command's module is loaded only when that command runs. */
import type { ParseArgsOptionsConfig } from 'node:util';
import { decimalWholeNumber, DEFAULT_DRAIN_SECONDS } from '../src/config/config.ts';
import { describeError, ReconError } from '../src/errors.ts';
import type { CommandContext } from './command.ts';
import { EXIT } from './exit-codes.ts';

/**
 * What a command's module exports: `run`, and (but `recon sandbox`, whose flags the sandbox package declares) the
 * OPTIONS it parses, which test/docs/commands.test.ts holds its --help and its page of docs/ to.
 */
interface CommandModule {
  run(ctx: CommandContext): Promise<number>;
  readonly OPTIONS?: ParseArgsOptionsConfig;
}

export const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  ingest: {
    summary: 'load export files (zip, gzip, bzip2 or plain csv) into the database',
    load: () => import('./commands/ingest.ts'),
  },
  'import-orders': {
    summary: "import the merchant's orders from csv files",
    load: () => import('./commands/import-orders.ts'),
  },
  'sync-orders': {
    summary: "read the merchant's orders from its own database (RECON_ORDERS_QUERY)",
    load: () => import('./commands/sync-orders.ts'),
  },
  reconcile: {
    summary: 'give every order in scope a verdict against what the service did',
    load: () => import('./commands/reconcile.ts'),
  },
  backfill: {
    summary: "ask the service now for some orders' transactions, load them and reconcile those orders",
    load: () => import('./commands/backfill.ts'),
  },
  report: {
    summary: 'the latest reconciliation run as a table, csv, json or a self-contained html page',
    load: () => import('./commands/report.ts'),
  },
  serve: {
    summary: 'run the export receiver, a worker and the nightly scheduler',
    load: () => import('./commands/serve.ts'),
  },
  worker: {
    summary: 'take ingest and nightly-run jobs off the queue (several may run)',
    load: () => import('./commands/worker.ts'),
  },
  nightly: {
    summary: 'start (or attach to) the nightly run of a date, and optionally wait for it',
    load: () => import('./commands/nightly.ts'),
  },
  exceptions: {
    summary: 'acknowledge open exceptions with a note, reopen them, list them with their acknowledgement',
    load: () => import('./commands/exceptions.ts'),
  },
  runs: { summary: 'list the nightly runs with their export requests', load: () => import('./commands/runs.ts') },
  prune: {
    summary: 'delete delivered bytes and reconciliation runs past their retention (--dry-run counts them)',
    load: () => import('./commands/prune.ts'),
  },
  migrate: { summary: 'apply the SQL migrations of sql/migrations', load: () => import('./commands/migrate.ts') },
  sandbox: { summary: 'serve a local sandbox of the payment service', load: () => import('./commands/sandbox.ts') },
  demo: {
    summary: 'one nightly run end to end on the embedded database and the built-in sandbox (npm start)',
    load: () => import('./commands/demo.ts'),
  },
};

export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(width)}  ${summary}`);
  return [
    'usage: recon <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    "'recon <command> --help' describes a command's options.",
  ].join('\n');
}

export async function main(argv: string[], ctx: Omit<CommandContext, 'argv'> = defaultContext()): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(usage() + '\n');
    return name ? EXIT.ok : EXIT.usage;
  }
  const command = COMMANDS[name];
  if (!command) {
    ctx.stderr.write(`recon: unknown command '${name}'\n${usage()}\n`);
    return EXIT.usage;
  }
  try {
    const module = await command.load();
    return await module.run({ ...ctx, argv: rest });
  } catch (error) {
    ctx.stderr.write(`recon ${name}: ${describeError(error)}\n`);
    if (ctx.env.RECON_DEBUG && error instanceof Error && error.stack) ctx.stderr.write(error.stack + '\n');
    return exitCodeFor(error);
  }
}

function exitCodeFor(error: unknown): number {
  if (error instanceof ReconError && (error.code === 'USAGE' || error.code === 'CONFIG')) return EXIT.usage;
  return EXIT.failed;
}

function defaultContext(): Omit<CommandContext, 'argv'> {
  return { env: process.env, stdout: process.stdout, stderr: process.stderr, signal: shutdownSignal() };
}

/**
 * Aborted on SIGINT/SIGTERM so long commands stop cleanly instead of dying mid-write. A command still running
 * RECON_DRAIN_SECONDS (and a little) after the first signal is ended anyway: one stuck where it cannot see the
 * signal (a start waiting for a lock) must stop on the first signal too.
 */
function shutdownSignal(): AbortSignal {
  const controller = new AbortController();
  const drainMs = (decimalWholeNumber(process.env.RECON_DRAIN_SECONDS) || DEFAULT_DRAIN_SECONDS) * 1000 + 2_000;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      controller.abort(new ReconError('INTERRUPTED', `interrupted by ${signal}`));
      setTimeout(() => {
        process.stderr.write(`recon: still running ${Math.round(drainMs / 1000)} s after ${signal}, exiting\n`);
        process.exit(EXIT.failed);
      }, drainMs).unref();
    });
  }
  return controller.signal;
}
