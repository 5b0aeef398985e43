#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SandboxError } from '../sandbox-error.ts';
import { runSandboxCommand, type SandboxCommandContext } from './sandbox-command.ts';

/**
 * `recon-sandbox`: the sandbox on its own, as `recon sandbox` runs it. Exit 1 on a usage error, 2 on any other. Its
 * tests pass a context of their own; the process passes its arguments, environment and streams, stopped by a signal.
 */
export async function main(ctx: SandboxCommandContext = processContext()): Promise<number> {
  try {
    return await runSandboxCommand(ctx);
  } catch (error) {
    ctx.stderr.write(
      `recon-sandbox: ${error instanceof Error ? error.message.replace(/\s*\n\s*/g, ' ') : String(error)}\n`,
    );
    return error instanceof SandboxError && error.code === 'USAGE' ? 1 : 2;
  }
}

function processContext(): SandboxCommandContext {
  const controller = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => controller.abort());
  return {
    argv: process.argv.slice(2),
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    signal: controller.signal,
  };
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exitCode = await main();
