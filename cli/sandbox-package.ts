import { ReconError } from '../src/errors.ts';

/**
 * The sandbox of the payment service is a development package (packages/sandbox): installed by `npm ci` in a
 * checkout, absent from recon's production image. The two commands that use it (`recon sandbox`, `recon demo`) load
 * it only when run, and say plainly when it is not there.
 */
export async function loadSandboxPackage(command: string) {
  try {
    const [main, cli] = await Promise.all([import('@recon/sandbox'), import('@recon/sandbox/cli')]);
    return { ...main, cli };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ReconError(
      'CONFIG',
      `${command} needs the sandbox package (@recon/sandbox), a development package not installed here: run it from a checkout after npm ci`,
      { cause: error },
    );
  }
}
