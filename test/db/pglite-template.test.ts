import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteSettingsOptions } from '../../src/db/pglite-settings.ts';
import { pgliteTemplateFor, pgliteTemplatePath, writePgliteTemplate } from '../../src/db/pglite-template.ts';

// Making the template runs initdb: seconds, tens of them on a busy 2-core machine.
describe('the data directory new embedded databases start from', { timeout: 120_000 }, () => {
  let dir: string;
  let template: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-pglite-template-'));
    template = path.join(dir, 'template.tar.gz');
    await writePgliteTemplate(template);
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is kept per PGlite version, in dist/ where the build puts it', () => {
    expect(pgliteTemplatePath()).toMatch(/[/\\]dist[/\\]pglite-template[/\\]\d+\.\d+\.\d+[^/\\]*\.tar\.gz$/);
  });

  it('starts a new directory as a database with the settings, and is not offered to a directory that has one', async () => {
    const pgdata = path.join(dir, 'pgdata');
    const loadDataDir = await pgliteTemplateFor(pgdata, template);
    expect(loadDataDir).toBeDefined();
    const pglite = await PGlite.create(pgdata, { ...pgliteSettingsOptions(PGlite.defaultStartParams), loadDataDir });
    try {
      const { rows } = await pglite.query<{ shared_buffers: string; databases: number }>(
        "SELECT current_setting('shared_buffers') AS shared_buffers, (SELECT count(*)::integer FROM pg_database) AS databases",
      );
      expect(rows[0]).toEqual({ shared_buffers: '16MB', databases: 3 });
      await pglite.exec('CREATE TABLE kept (id integer); INSERT INTO kept VALUES (1)');
    } finally {
      await pglite.close();
    }
    expect(await pgliteTemplateFor(pgdata, template)).toBeUndefined();
    const reopened = await PGlite.create(pgdata, pgliteSettingsOptions(PGlite.defaultStartParams));
    try {
      expect((await reopened.query('SELECT id FROM kept')).rows).toEqual([{ id: 1 }]);
    } finally {
      await reopened.close();
    }
  });

  it('is not offered when the build made none: PGlite runs initdb itself', async () => {
    const missing = path.join(dir, 'none.tar.gz');
    expect(existsSync(missing)).toBe(false);
    expect(await pgliteTemplateFor(path.join(dir, 'other'), missing)).toBeUndefined();
  });
});
