import { execFileSync } from 'node:child_process';
import pg from 'pg';

/** The benchmark's databases, made and dropped through the admin connection of DATABASE_URL. */
export function benchDatabases(adminUrl: string, cli: string) {
  const urlOf = (name: string) => {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  return {
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
    drop: (name: string) => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
