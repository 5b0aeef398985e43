import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';

const run = promisify(execFile);
let folder: string | undefined;
afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

/**
 * What the Dockerfile's runtime stage installs: recon's manifests and the protocol package, without packages/sandbox,
 * then `npm ci --omit=dev`. Neither the sandbox (a development package) nor the development tools may be in the result.
 */
it('installs recon for production without the sandbox or the development tools', async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'recon-production-install-'));
  const root = packageRoot();
  for (const entry of ['package.json', 'package-lock.json', path.join('packages', 'protocol')]) {
    await cp(path.join(root, entry), path.join(folder, entry), { recursive: true });
  }
  await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: folder,
  });
  const installed = await readdir(path.join(folder, 'node_modules'));
  expect(await readdir(path.join(folder, 'node_modules', '@recon'))).toEqual(['protocol']);
  for (const absent of [
    'smtp-server',
    'mailparser',
    'vitest',
    'eslint',
    'playwright-core',
    'csv-parse',
    'unzipper',
    'knip',
  ])
    expect(installed).not.toContain(absent);
  // nodemailer is recon's too: it sends the alert e-mails (RECON_ALERT_EMAIL).
  for (const present of ['pg', 'kysely', 'pg-boss', 'zod', 'nodemailer']) expect(installed).toContain(present);
}, 120_000);
