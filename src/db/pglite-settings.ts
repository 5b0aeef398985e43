/**
 * Server settings of embedded PGlite, chosen for a 512 MB container.
 *
 * PGlite allocates PostgreSQL's shared memory through emscripten's mmap, which zero-fills it: all of
 * shared_buffers is resident from the moment a database opens, and initdb's 128MB also grew the wasm heap from
 * its 128 MB minimum to 189 MB. Measured with 16MB: opening a database peaked at 145 MB RSS instead of 260, a
 * 1M-row gzip ingest ran at about 300 MB instead of 430 and took no longer (32 s of CPU against 38: the data
 * files are read through the OS page cache either way). The other memory settings (work_mem 4MB,
 * temp_buffers 8MB, maintenance_work_mem 64MB) never grew the heap past its minimum in that ingest or the demo.
 */
const SETTINGS = ['shared_buffers=16MB'];

/**
 * PGlite options carrying the settings: on the command line of every start (a data directory made before keeps
 * 128MB in its postgresql.conf), and to initdb, which writes them into postgresql.conf and runs its bootstrap
 * backends with them. `startParams` replaces PGlite's own start parameters, hence `defaultStartParams`.
 */
export function pgliteSettingsOptions(defaultStartParams: readonly string[]): {
  startParams: string[];
  initDbStartParams: string[];
} {
  const asFlags = SETTINGS.flatMap((setting) => ['-c', setting]);
  return { startParams: [...defaultStartParams, ...asFlags], initDbStartParams: asFlags };
}
