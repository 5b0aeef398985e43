import { ReconError } from '../../errors.ts';
import type { CommandContext } from '../command.ts';

// Placeholder while the command is being built; replaced by its real implementation.
export async function run(_ctx: CommandContext): Promise<number> {
  throw new ReconError('USAGE', "'demo' is not available yet");
}
