/**
 * The test files that take longest, and about how many seconds each took in a whole run on a clean clone
 * (2 cores, `DATABASE_URL` set; docs/development.md, Tests). heavy-first-sequencer.ts starts them first, longest
 * first, so no long file starts late and runs on alone at the end while the other core has nothing left; every
 * other file follows in vitest's own order (the largest first, on a clean clone).
 *
 * Only the order is taken from these figures, and only roughly: a file here that got faster merely starts early.
 * What a file left out costs is at most its own time at the end, so a file that takes 10 s or more in a run
 * belongs here (heavy-first-sequencer.test.ts checks every one here is still a test file of the suite).
 */
export const HEAVY_FILES: Readonly<Record<string, number>> = {
  'test/simulation/simulate-pglite.test.ts': 45,
  'test/simulation/simulate-postgres.test.ts': 35,
  'test/ingest/chunked-repeats.test.ts': 29,
  'test/nightly/nightly-exports.test.ts': 25,
  'test/cli/nightly-command.test.ts': 23,
  'test/decompress/archive-fuzz.test.ts': 19,
  'packages/sandbox/test/cli.test.ts': 18,
  'test/ingest/ingest-files.test.ts': 18,
  'test/cli/report-command.test.ts': 13,
  'test/cli/ingest-command.test.ts': 13,
  'test/alerts/alert-check.test.ts': 13,
  'test/simulation/simulate-command.test.ts': 12,
  'test/nightly/nightly-accounts.test.ts': 11,
  'test/cli/demo-command.test.ts': 11,
  'test/nightly/worker-killed.test.ts': 11,
  'test/cli/exceptions-command.test.ts': 10,
  'test/cli/serve-metrics.test.ts': 10,
  'test/cli/serve-start-failures.test.ts': 10,
  'test/cli/sync-orders-command.test.ts': 10,
  'test/db/pglite-settings.test.ts': 10,
  'test/retention/prune-runs.test.ts': 10,
  'test/cli/serve-logs.test.ts': 10,
};
