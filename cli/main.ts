#!/usr/bin/env -S node --max-semi-space-size=16 --max-old-space-size=128 --initial-old-space-size=48 --liftoff-only
// Ingest allocates fast while keeping little (about 17 MB live after 5M rows), and V8's heap heuristics
// grow the young generation to 64 MB and the old one in bursts: measured on the same 5M-row files, peak
// RSS was 255-290 MB with no flags and 130-160 MB with these, at the same speed, steady from 1M to 5M rows.
// --initial-old-space-size=48 then keeps V8 from a full collection every 15 MB promoted (the old generation's
// limit stayed near twice its 16 MB live): a 1M-row gzip ingest ran 41 mark-compacts, 19 with it, and Node's CPU
// went 6.9-7.2 -> 6.4 s at 1M rows and 35.0 -> 27.7 s at 5M, for peak RSS 196-201 -> 206-213 MB, flat to 5M.
// --liftoff-only keeps embedded PGlite's wasm on V8's baseline compiler: its optimizing compiler, once
// PostgreSQL's parser (raw_parser, one 105 kB function) grows hot, spends 2.5 s and 600 MB of memory compiling
// it, whatever the command. Measured on PGlite: recon demo and a 1M-row gzip ingest peaked at 1.1 GB RSS
// without it and 550 MB with it; the demo ran faster (18.8 s -> 14.8 s), the 1M-row ingest slower (32 s ->
// 52 s). Setting the flag from code (v8.setFlagsFromString) once Node runs does not take.
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
