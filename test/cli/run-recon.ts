import { spawn } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../src/package-root.ts';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node src/cli/main.ts ARGS` from the package root as a real subprocess (stdout and stderr are
 * pipes, not a terminal). `env` replaces the database variables of this process's environment entirely,
 * so a PGlite run never inherits the DATABASE_URL of the test environment.
 */
export function runRecon(args: string[], env: Record<string, string | undefined>): Promise<RunResult> {
  const base = { ...process.env };
  for (const name of Object.keys(base)) if (name === 'DATABASE_URL' || name.startsWith('RECON_')) delete base[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join('src', 'cli', 'main.ts'), ...args], {
      cwd: packageRoot(),
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
