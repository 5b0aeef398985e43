import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { packageRoot } from '../package-root.ts';
import { pgliteSettingsOptions } from './pglite-settings.ts';

/**
 * A new data directory, made once by `npm run build` (scripts/make-pglite-template.ts), that embedded PGlite
 * starts a new database from instead of running initdb.
 *
 * PGlite's initdb runs in a second PostgreSQL instance of its own, whose wasm heap (128 MB at least) it copies
 * and writes back before each of initdb's steps: opening a new directory took 7-10 s and peaked above 490 MB
 * RSS, which made the peak of recon demo (a new directory every run, 518 MB) and of a 1M-row gzip ingest into
 * a new directory (509 MB). From the template the open takes about 3 s and 230 MB, the demo peaked at 285 MB,
 * that ingest at 353 MB. Kept per PGlite version: another version's PostgreSQL may not read it.
 */
export function pgliteTemplatePath(): string {
  return path.join(packageRoot(), 'dist', 'pglite-template', `${pgliteVersion()}.tar.gz`);
}

/** What to start `pgdata` from: nothing when it holds a database already or the build made no template. */
export async function pgliteTemplateFor(pgdata: string, template = pgliteTemplatePath()): Promise<Blob | undefined> {
  if (existsSync(path.join(pgdata, 'PG_VERSION')) || !existsSync(template)) return undefined;
  return new Blob([await readFile(template)]);
}

export async function writePgliteTemplate(file: string): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  // In memory: PGlite archives a directory of its own file system, and this one is only there to be archived.
  const pglite = await PGlite.create({ ...pgliteSettingsOptions(PGlite.defaultStartParams) });
  let archive: Blob;
  try {
    // A database started from an archive of a running instance recovers from its last checkpoint: let that be now.
    await pglite.exec('CHECKPOINT');
    archive = await pglite.dumpDataDir('gzip');
  } finally {
    await pglite.close();
  }
  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, Buffer.from(await archive.arrayBuffer()));
  await rename(partial, file);
}

function pgliteVersion(): string {
  // The package exports no package.json: it sits above the entry point, dist/index.cjs.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  return (JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string })
    .version;
}
