#!/usr/bin/env -S node --max-semi-space-size=16 --max-old-space-size=128 --initial-old-space-size=48 --liftoff-only
// These flags keep a large ingest's memory low and PGlite's wasm off V8's optimizing compiler; they must be on the
// command line, not set from code. The measurements: docs/benchmarks.md, "Why these settings".
// Only node: modules and require-node.js load before the check: the rest, @recon/protocol included, is loaded
// by the dynamic import below, once the check has passed.
import './require-node.js';

// `recon ... | head` closes the pipe early: that is the reader's choice, not a failure worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}
const { main } = await import('./recon-cli.ts');
process.exitCode = await main(process.argv.slice(2));
