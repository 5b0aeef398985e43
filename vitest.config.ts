import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { HeavyFirstSequencer } from './test/support/heavy-first-sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Database suites each create their own database or PGlite instance, so files may run in parallel.
    pool: 'forks',
    // vitest runs one file fewer than the cores at once: one on two cores, where most files wait on subprocesses,
    // sockets, the server and the export timeouts most of their time. A file a core still left CPU idle (the
    // simulator's seeds: 35 s of CPU in 87 s on two workers), so one file more than the cores (docs/development.md,
    // Tests). (vitest caps a percentage at the cores, not a number.)
    maxWorkers: availableParallelism() + 1,
    // A worker process runs file after file, its imports loaded once: a process a file, each starting and importing
    // recon, pg and PGlite anew, took 70% more CPU (docs/development.md, Tests). So a file leaves the process as it
    // found it: the environment, timers and listeners restored, its databases, servers and processes closed.
    isolate: false,
    // As the recon command runs (cli/main.ts's shebang): PGlite's wasm stays off V8's optimizing compiler, which
    // otherwise spends seconds of CPU on its SQL parser in every worker that opens one (docs/development.md, Tests).
    execArgv: ['--liftoff-only'],
    // The longest files first, whatever vitest's cache holds (none on a clean clone, as CI runs): one started last
    // ran on alone while the other core had nothing left (test/support/heavy-files.ts).
    sequence: { sequencer: HeavyFirstSequencer },
    // One migrated database per backend for the whole run; each test's database is a copy of it.
    globalSetup: ['test/support/database-templates.ts'],
  },
});
