import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

it('takes the connection strings pg takes', () => {
  for (const url of [
    'postgres://root@127.0.0.1:5432/postgres',
    'postgresql://u:p@db.example/recon?sslmode=require',
    'postgres://u@/recon?host=/var/run/postgresql',
    'socket:/var/run/postgresql?db=recon',
  ]) {
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
  }
});

it('refuses a malformed DATABASE_URL as a configuration error naming the variable, never its value', async () => {
  for (const url of [
    'localhost:5432/recon',
    'postgres//root@localhost/recon',
    'mysql://root@localhost/recon',
    'postgres:///recon',
    'http://secret-password@db/recon',
  ]) {
    const message = await expectReconError(
      async () => loadConfig({ DATABASE_URL: url }),
      'CONFIG',
      'invalid environment variable DATABASE_URL: expected a PostgreSQL connection string',
    );
    expect(message).not.toContain('secret-password');
  }
});
