#!/usr/bin/env -S node --max-semi-space-size=16 --max-old-space-size=128 --initial-old-space-size=48 --liftoff-only
// Ingest allocates fast while keeping little (about 17 MB live after 5M rows), and V8's heap heuristics
// grow the young generation to 64 MB and the old one in bursts: measured on the same 5M-row files, peak
// RSS was 255-290 MB with no flags and 130-160 MB with these, at the same speed, steady from 1M to 5M rows.
// --initial-old-space-size=48 then keeps V8 from a full collection every 15 MB promoted (the old generation's
// limit stayed near twice its 16 MB live): a 1M-row gzip ingest ran 41 mark-compacts, 19 with it, and Node's CPU
// went 6.9-7.2 -> 6.4 s at 1M rows and 35.0 -> 27.7 s at 5M, for peak RSS 196-201 -> 206-213 MB, flat to 5M.
// --liftoff-only keeps embedded PGlite's wasm on V8's baseline compiler: its optimizing compiler, once
// PostgreSQL's parser (raw_parser, one 105 kB function) grows hot, spends 2.5 s and 600 MB of memory compiling
// it, whatever the command. Measured on PGlite: recon demo and a 1M-row gzip ingest peaked at 1.1 GB RSS
// without it and 550 MB with it; the demo ran faster (18.8 s -> 14.8 s), the 1M-row ingest slower (32 s ->
// 52 s). Setting the flag from code (v8.setFlagsFromString) once Node runs does not take.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DRAIN_SECONDS } from '../src/config/config.ts';
import { describeError, ReconError } from '../src/errors.ts';
import type { CommandContext } from './command.ts';
import { EXIT } from './exit-codes.ts';

const COMMANDS: Record<
  string,
  { summary: string; load: () => Promise<{ run: (ctx: CommandContext) => Promise<number> }> }
> = {
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
  runs: { summary: 'list the nightly runs with their export requests', load: () => import('./commands/runs.ts') },
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
    if (process.env.RECON_DEBUG && error instanceof Error && error.stack) ctx.stderr.write(error.stack + '\n');
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
  const drainMs = (Number(process.env.RECON_DRAIN_SECONDS) || DEFAULT_DRAIN_SECONDS) * 1000 + 2_000;
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

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  // `recon ... | head` closes the pipe early: that is the reader's choice, not a failure worth a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  process.exitCode = await main(process.argv.slice(2));
}
