import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { refusingBaseUrl } from '../support/loopback.ts';
import { runRecon } from './run-recon.ts';

describe('recon ingest with a PostgreSQL that cannot be reached', () => {
  it('exits 2 with one line on stderr naming the database, no stack trace, and no file line', async () => {
    const { port } = await refusingBaseUrl();
    const result = await runRecon(['ingest', path.join('fixtures', 'comma-quoted.csv')], {
      DATABASE_URL: `postgres://root@127.0.0.1:${port}/postgres`,
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      new RegExp(`^recon ingest: cannot connect to PostgreSQL: [^\\n]*127\\.0\\.0\\.1:${port}[^\\n]*\\n$`),
    );
    expect(result.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });
});
