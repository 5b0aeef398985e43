import { spawn } from 'node:child_process';

export interface Measure {
  seconds: number;
  peakRssMb: number;
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command under GNU time: wall seconds and the peak RSS of the measured process (not of this one).
 * The last stderr line is time's own; the command's stderr is what comes before it.
 */
export function timed(command: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<Measure> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%e %M', command, ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stderr.trimEnd().split('\n');
      const [seconds, rssKb] = (lines.pop() ?? '').split(' ').map(Number);
      if (!Number.isFinite(seconds) || !Number.isFinite(rssKb))
        return reject(new Error(`${command}: no timing from /usr/bin/time: ${stderr.slice(-500)}`));
      resolve({ seconds: seconds!, peakRssMb: rssKb! / 1024, exitCode: code ?? -1, stdout, stderr: lines.join('\n') });
    });
  });
}
