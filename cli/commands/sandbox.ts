import { ReconError } from '../../src/errors.ts';
import type { CommandContext } from '../command.ts';
import { loadSandboxPackage } from '../sandbox-package.ts';

/** `recon sandbox`: the sandbox package's own command (packages/sandbox), with recon's exit codes and one-line errors. */
export async function run(ctx: CommandContext): Promise<number> {
  const { cli, SandboxError } = await loadSandboxPackage('recon sandbox');
  try {
    return await cli.runSandboxCommand(ctx);
  } catch (error) {
    if (error instanceof SandboxError && error.code === 'USAGE')
      throw new ReconError('USAGE', error.message, { cause: error });
    throw error;
  }
}
