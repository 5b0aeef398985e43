import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { makeTempFolder, removeStaleTempFolders } from '../../src/temp/temp-folder.ts';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'temp-folder-test-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** The pid of a process that has ended. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' }).pid;
}

it('names a folder after its owner, and removes it with its content', async () => {
  const folder = await makeTempFolder('upload', directory);
  expect(path.basename(folder.path)).toMatch(new RegExp(`^recon-${process.pid}-upload-[A-Za-z0-9]{6}$`));
  await writeFile(path.join(folder.path, 'file'), 'x');
  await folder.remove();
  expect(await readdir(directory)).toEqual([]);
});

it("removes the folders of recon processes that are gone, and nothing of a live process's or anyone else's", async () => {
  const dead = deadPid();
  const mine = await makeTempFolder('upload', directory);
  // PID 1 is always running: a folder it owned is a live process's.
  for (const name of [
    `recon-${dead}-delivery-AbC123`,
    `recon-${dead}-upload-XyZ789`,
    'recon-1-upload-Live01',
    'not-recon-folder',
    'recon-notes',
  ]) {
    await mkdir(path.join(directory, name));
    await writeFile(path.join(directory, name, 'spooled'), 'bytes');
  }
  // A folder of an earlier recon, which did not name its owner: stale only once nothing touched it for an hour.
  await mkdir(path.join(directory, 'recon-delivery-Old123'));
  await utimes(
    path.join(directory, 'recon-delivery-Old123'),
    new Date(Date.now() - 2 * 3600_000),
    new Date(Date.now() - 2 * 3600_000),
  );
  await mkdir(path.join(directory, 'recon-delivery-New123'));

  expect(await removeStaleTempFolders(directory)).toBe(3);
  expect((await readdir(directory)).sort()).toEqual(
    [
      'not-recon-folder',
      'recon-1-upload-Live01',
      'recon-delivery-New123',
      'recon-notes',
      path.basename(mine.path),
    ].sort(),
  );
});
