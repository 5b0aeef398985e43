import { execFileSync } from 'node:child_process';

/**
 * Builds dist/ from the sources before a benchmark runs recon as its users do (the built executable): a benchmark
 * of a stale build measures code that is no longer there.
 */
export function buildRecon(root: string, log: (message: string) => void): void {
  log('building recon (npm run build)');
  // tsc's diagnostics go to stdout: send them to stderr with the rest of the progress.
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  } catch {
    throw new Error('npm run build failed (its errors are above)');
  }
}
