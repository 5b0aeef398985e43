/**
 * Server settings of embedded PGlite, chosen for a 512 MB container. PGlite's shared memory is zero-filled by
 * emscripten's mmap, so all of shared_buffers is resident from the start; the data files are read through the OS
 * page cache anyway, so a small one costs no speed (figures: docs/benchmarks.md, "Why these settings").
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
