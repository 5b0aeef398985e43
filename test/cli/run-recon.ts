import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../cli/recon-cli.ts';
import { packageRoot } from '../../src/package-root.ts';
import { parseLogRecords, untilLogged } from '../support/log-records.ts';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunningRecon {
  readonly child: ChildProcess;
  /** Calls `listener` with each complete line of stdout as it arrives. */
  onStdoutLine(listener: (line: string) => void): void;
  /** What it has written on stdout so far. */
  stdoutSoFar(): string;
  /** What it has written on stderr so far. */
  stderrSoFar(): string;
  readonly done: Promise<RunResult>;
}

/**
 * The V8 flags of the executable's shebang (`#!/usr/bin/env -S node FLAGS`): recon runs with them as users run it.
 * They matter on PGlite, whose wasm they keep off the optimizing compiler (seconds and hundreds of MB a process).
 */
export const NODE_FLAGS = readFileSync(path.join(packageRoot(), 'cli', 'main.ts'), 'utf8')
  .split('\n', 1)[0]!
  .replace(/^#!\/usr\/bin\/env -S node\s*/, '')
  .split(/\s+/)
  .filter((flag) => flag.startsWith('--'));

/**
 * NODE_COMPILE_CACHE for the processes the tests start: node keeps the code it compiled from recon's modules and its
 * dependencies (type-stripped and compiled, checked against each file's content), so a process after the first
 * skips most of that: a third of a start's CPU (1.5 s to 0.8 s for `recon serve --help`, 2 cores).
 */
export const COMPILE_CACHE = path.join(os.tmpdir(), 'node-compile-cache-recon-tests');

/**
 * Starts `node FLAGS cli/main.ts ARGS` from the package root as a real subprocess (stdout and stderr are
 * pipes, not a terminal). `env` replaces the database variables of this process's environment entirely,
 * so a PGlite run never inherits the DATABASE_URL of the test environment. The admin listener takes a free port
 * unless `env` names one: test files run side by side, and would otherwise all want RECON_ADMIN_PORT's default.
 */
export function startRecon(
  args: string[],
  env: Record<string, string | undefined>,
  options: { maxOpenFiles?: number } = {},
): RunningRecon {
  const command = [process.execPath, ...NODE_FLAGS, path.join('cli', 'main.ts'), ...args];
  // A descriptor limit of its own, as a host with a low `ulimit -n` gives it: the shell sets it, then becomes node.
  const [file, argv] =
    options.maxOpenFiles === undefined
      ? [command[0]!, command.slice(1)]
      : ['/bin/sh', ['-c', `ulimit -n ${options.maxOpenFiles} && exec "$@"`, 'sh', ...command]];
  const child = spawn(file, argv, {
    cwd: packageRoot(),
    env: { ...reconEnvironment(env), NODE_COMPILE_CACHE: COMPILE_CACHE },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const lineListeners: ((line: string) => void)[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const complete = stdout.length;
    stdout += chunk;
    const lines = stdout
      .slice(stdout.lastIndexOf('\n', complete - 1) + 1)
      .split('\n')
      .slice(0, -1);
    for (const line of lines) for (const listener of lineListeners) listener(line);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return {
    child,
    onStdoutLine: (listener) => lineListeners.push(listener),
    stdoutSoFar: () => stdout,
    stderrSoFar: () => stderr,
    done,
  };
}

/** This process's environment without its database and recon variables, then `env`: see startRecon. */
function reconEnvironment(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of Object.keys(base)) if (name === 'DATABASE_URL' || name.startsWith('RECON_')) delete base[name];
  return { ...base, RECON_ADMIN_PORT: '0', ...env };
}

/** Runs recon to its end: see startRecon. */
export function runRecon(args: string[], env: Record<string, string | undefined>): Promise<RunResult> {
  return startRecon(args, env).done;
}

/**
 * Runs `recon ARGS` to its end in this process: cli/recon-cli.ts's main, with the environment startRecon gives a
 * subprocess, and streams (not terminals) that keep its stdout and stderr. For the variants of a refusal or a report:
 * a process costs one to two seconds of CPU. Each exit code a test file checks keeps at least one real process.
 */
export async function runReconInProcess(args: string[], env: Record<string, string | undefined>): Promise<RunResult> {
  const stdout = collected();
  const stderr = collected();
  const code = await main(args, {
    env: reconEnvironment(env),
    stdout: stdout.stream,
    stderr: stderr.stream,
    signal: new AbortController().signal,
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/**
 * A runner for the variants of one behaviour: each exit code's first run is a real process (runRecon), so the
 * executable is seen to exit with it; the others run in this process (runReconInProcess).
 */
export function oneProcessPerExitCode(): (
  args: string[],
  env: Record<string, string | undefined>,
  expectedCode: number,
) => Promise<RunResult> {
  const spawned = new Set<number>();
  return (args, env, expectedCode) => {
    if (spawned.has(expectedCode)) return runReconInProcess(args, env);
    spawned.add(expectedCode);
    return runRecon(args, env);
  };
}

/** A stream that keeps what is written to it, as it is written. */
function collected(): { stream: Writable; text(): string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/**
 * Where a started `recon serve` (or `recon worker`, which has no public listener) listens, once it has logged it:
 * `listening on URL` (serve only), then `admin on URL`, each a JSON record with its `url`. Rejects with its stderr
 * if it exits first.
 */
export async function listeningUrls(recon: RunningRecon): Promise<{ url: string | undefined; adminUrl: string }> {
  const admin = await Promise.race([
    untilLogged(recon, 'the admin listener', (record) => record.msg.startsWith('admin on '), { timeoutMs: 60_000 }),
    recon.done.then((result) => Promise.reject(new Error(`recon exited ${result.code}: ${result.stderr}`))),
  ]);
  const listening = parseLogRecords(recon.stdoutSoFar()).find((record) => record.msg.startsWith('listening on '));
  return { url: listening?.url as string | undefined, adminUrl: admin.url as string };
}
