import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const SIMULATE = path.resolve(import.meta.dirname, '../../simulation/simulate.ts');

/** `npm run simulate` as users run it, on PGlite: what it prints and how it exits. */
async function simulate(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const environment = { ...process.env };
  delete environment['DATABASE_URL'];
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [SIMULATE, ...args], {
      env: environment,
      timeout: 240_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('npm run simulate', () => {
  it('runs several seeds in child processes at once, one row each, and says how many at once', async () => {
    const { code, stdout, stderr } = await simulate(['--seeds', '2', '--first', '5', '--nights', '1', '--jobs', '2']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const rows = stdout.split('\n').filter((line) => line.startsWith('seed '));
    expect(rows.map((row) => /^seed +(\d+) .* ok, fingerprint [0-9a-f]{16}$/.exec(row)?.[1]).sort()).toEqual([
      '5',
      '6',
    ]);
    expect(stdout).toMatch(/^2 seeds, 1 nights each, on PGlite: 0 failed, \d+ s of seeds in \d+ s \(2 at once\)$/m);
  }, 300_000);

  it('refuses a count that is not a whole number, with the usage, exit code 2', async () => {
    const { code, stdout, stderr } = await simulate(['--seeds', '3', '--jobs', 'two']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^--jobs takes a whole number\nusage: npm run simulate -- /);
  });
});
