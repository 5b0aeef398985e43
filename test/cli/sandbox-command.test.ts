import { describe, expect, it } from 'vitest';
import { oneProcessPerExitCode, startRecon } from './run-recon.ts';

/** `recon sandbox` is the sandbox package's own command (tested there), run with recon's exit codes. */
describe('recon sandbox', () => {
  it('serves the sandbox, seeded, and stops on SIGTERM', async () => {
    const sandbox = startRecon(['sandbox', '--port', '0', '--seed', '7'], {});
    const url = await new Promise<string>((resolve, reject) => {
      sandbox.onStdoutLine(resolve);
      sandbox.done.then((result) => reject(new Error(`recon sandbox exited ${result.code}: ${result.stderr}`)), reject);
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const clock = await fetch(`${url}/sandbox/clock`);
    expect(clock.status).toBe(200);
    sandbox.child.kill('SIGTERM');
    const result = await sandbox.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^sandbox: seeded scenario 7: \d+ orders, \d+ transactions$/m);
  });

  it('refuses a bad flag or variable with exit 1 and one line naming it', async () => {
    const refused = oneProcessPerExitCode();
    for (const [args, env, message] of [
      [['--port', 'eighty'], {}, /^recon sandbox: invalid --port "eighty": /],
      [[], { RECON_SANDBOX_SEED: 'seven' }, /^recon sandbox: invalid environment variable RECON_SANDBOX_SEED: /],
    ] as const) {
      const result = await refused(['sandbox', ...args], env, 1);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });
});
