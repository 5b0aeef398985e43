import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';

it('exits quietly when the reader of its output goes away (recon ... | head)', async () => {
  const child = spawn(process.execPath, [path.join('cli', 'main.ts'), '--help'], {
    cwd: packageRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Closed before the child has written anything: its first write meets EPIPE.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
});
