import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A folder of recon's own under the system's temp folder, removed (with everything in it) by `remove`. */
export interface TempFolder {
  readonly path: string;
  remove(): Promise<void>;
}

const PREFIX = 'recon-';
/** `recon-<pid>-<purpose>-XXXXXX`: the owner's pid tells a crashed process's leftovers from a live process's work. */
const OWNED_NAME = /^recon-(\d+)-[a-z-]+-[A-Za-z0-9]{6}$/;
/** Folders of recon versions that did not name their owner: stale once nothing has touched them for this long. */
const UNOWNED_NAME = /^recon-delivery-[A-Za-z0-9]{6}$/;
const UNOWNED_STALE_MS = 3600_000;

export async function makeTempFolder(purpose: string, directory = os.tmpdir()): Promise<TempFolder> {
  const folder = await mkdtemp(path.join(directory, `${PREFIX}${process.pid}-${purpose}-`));
  return { path: folder, remove: () => rm(folder, { recursive: true, force: true }) };
}

/**
 * Removes what a killed recon process left in the temp folder (a spooled upload, a delivery copied out for its
 * ingest): folders whose owner is no longer running. Run at the start of every long-running command, so that
 * a process killed again and again (out of memory, say) cannot fill the disk. Returns how many it removed.
 */
export async function removeStaleTempFolders(directory = os.tmpdir(), now = Date.now()): Promise<number> {
  let removed = 0;
  for (const name of await readdir(directory).catch(() => [] as string[])) {
    if (!name.startsWith(PREFIX) || !(await isStale(path.join(directory, name), name, now))) continue;
    await rm(path.join(directory, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

async function isStale(folder: string, name: string, now: number): Promise<boolean> {
  const owned = OWNED_NAME.exec(name);
  if (owned) return Number(owned[1]) !== process.pid && !isRunning(Number(owned[1]));
  if (!UNOWNED_NAME.test(name)) return false;
  const stats = await stat(folder).catch(() => undefined);
  return stats !== undefined && now - stats.mtimeMs > UNOWNED_STALE_MS;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user holds that pid, alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
