/**
 * `npm test` while every core is kept busy: the suite must not depend on the machine's load, and this shows it on the
 * machine at hand. `node scripts/suite-under-load.ts [--runs N]` starts one spinning child process per core (normal
 * priority), runs `npm test` N times in a row (3 unless told) with this process's environment, prints each run's wall
 * time and result, and stops the spinners however it ends. Exits 1 when a run failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write(`--runs: a whole number of at least 1, not ${values.runs}\n`);
  process.exit(2);
}

// A child process, not a worker thread: the burners must not share this process's event loop or its fate.
const SPIN = 'for (;;) { Math.sqrt(Math.random()); }';
const burners: ChildProcess[] = [];
for (let index = 0; index < os.availableParallelism(); index++) {
  burners.push(spawn(process.execPath, ['-e', SPIN], { stdio: 'ignore' }));
}
let suite: ChildProcess | undefined;

function stopAll(): void {
  for (const burner of burners) if (burner.exitCode === null && burner.signalCode === null) burner.kill('SIGKILL');
  // The whole group: npm, vitest and vitest's workers, and whatever recon processes the tests started. SIGINT, as
  // Ctrl-C in a terminal would send them (an interrupted run may leave its template database, as it would then).
  if (suite?.pid !== undefined && suite.exitCode === null && suite.signalCode === null) {
    try {
      process.kill(-suite.pid, 'SIGINT');
    } catch {
      // Gone already.
    }
  }
}
process.on('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopAll();
    process.stderr.write(`suite-under-load: stopped by ${signal}\n`);
    process.exit(130);
  });
}

function runSuite(): Promise<number | null> {
  return new Promise((resolve, reject) => {
    // npm test's output passes through: a failing run shows which test failed.
    // A process group of its own, so that stopping it stops all of it (see stopAll).
    suite = spawn('npm', ['test'], { stdio: 'inherit', env: process.env, detached: true });
    suite.on('error', reject);
    suite.on('close', (code) => resolve(code));
  });
}

process.stderr.write(`suite-under-load: ${burners.length} spinning processes, ${runs} run(s) of npm test\n`);
const results: { seconds: number; passed: boolean }[] = [];
try {
  for (let run = 1; run <= runs; run++) {
    const started = performance.now();
    const code = await runSuite();
    const result = { seconds: (performance.now() - started) / 1000, passed: code === 0 };
    results.push(result);
    process.stderr.write(
      `suite-under-load: run ${run}/${runs}: ${result.seconds.toFixed(1)} s, ${result.passed ? 'passed' : `failed (exit ${code})`}\n`,
    );
  }
} finally {
  stopAll();
}
process.stdout.write(
  results
    .map((result, index) => `run ${index + 1}: ${result.seconds.toFixed(1)} s ${result.passed ? 'passed' : 'FAILED'}\n`)
    .join(''),
);
process.exitCode = results.every((result) => result.passed) ? 0 : 1;
