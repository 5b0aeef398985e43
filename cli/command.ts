import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ReconError } from '../src/errors.ts';

/** What every subcommand receives: its arguments, its environment and where to write. Tests pass their own. */
export interface CommandContext {
  readonly argv: string[];
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly signal: AbortSignal;
}

/**
 * node:util parseArgs, with its errors turned into recon usage errors. A command passes the OPTIONS its module
 * exports, so that the docs' tests see every option it takes.
 */
export function parseCommandArgs<T extends ParseArgsConfig['options']>(
  argv: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (error) {
    throw new ReconError('USAGE', (error as Error).message, { cause: error });
  }
}
