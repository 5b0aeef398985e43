import { execFileSync } from 'node:child_process';
import pg from 'pg';

/** The database bench:history builds, which bench:reporting reads. */
export const HISTORY_DATABASE = 'recon_bench_history';

/** A database name given on the command line: a plain identifier, since it is written into SQL unquoted. */
export function databaseName(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new Error(`--database must be a lower-case identifier (letters, digits, _), got '${name}'`);
  return name;
}

/** The benchmark's databases, made and dropped through the admin connection of DATABASE_URL. */
export function benchDatabases(adminUrl: string, cli: string) {
  const urlOf = (name: string) => {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const admin = async (statement: string, params?: unknown[]) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return (await client.query<Record<string, unknown>>(statement, params)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    url: urlOf,
    exists: async (name: string) => (await admin('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length > 0,
    /** Drops `name` if a previous run left it, creates it empty and migrates it with the built CLI. */
    async fresh(name: string): Promise<string> {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin(`CREATE DATABASE ${name}`);
      const url = urlOf(name);
      execFileSync(process.execPath, [cli, 'migrate'], {
        env: { ...process.env, DATABASE_URL: url },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      return url;
    },
    async drop(name: string): Promise<void> {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
