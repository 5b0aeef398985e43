import pg from 'pg';
import { to as copyToStdout } from 'pg-copy-streams';
import { openDatabase } from '../src/db/open-database.ts';

/**
 * What the benchmarks read from recon's database between recon's commands, the same way on both backends: a pg
 * client on PostgreSQL, the embedded database opened in this process on PGlite (which one process holds at a time, so
 * a session is closed before recon runs).
 */
export interface SqlSession {
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<Row[]>;
  /**
   * Runs one SELECT (or WITH) statement through COPY (statement) TO its output, as psql's \copy would: the server
   * plans and runs it as for any client, and its rows are counted, not kept, so a million of them cost nothing here.
   */
  countRows(select: string): Promise<number>;
  close(): Promise<void>;
}

export async function postgresSession(url: string): Promise<SqlSession> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    async query<Row>(text: string, params?: unknown[]) {
      return (await client.query(text, params)).rows as Row[];
    },
    async countRows(select) {
      let rows = 0;
      for await (const chunk of client.query(copyToStdout(`COPY (${select}) TO STDOUT`)) as AsyncIterable<Buffer>)
        rows += lines(chunk);
      return rows;
    },
    close: () => client.end(),
  };
}

/** The PGlite database recon keeps under `dataDir`, opened with the settings recon opens it with. */
export async function pgliteSession(dataDir: string): Promise<SqlSession> {
  const database = await openDatabase({ databaseUrl: undefined, dataDir });
  const pglite = database.pglite!;
  return {
    async query<Row>(text: string, params?: unknown[]) {
      return (await pglite.query<Row>(text, params)).rows;
    },
    // PGlite has no COPY TO STDOUT: it writes the COPY's text into a Blob it returns with the result.
    async countRows(select) {
      const { blob } = await pglite.query(`COPY (${select}) TO '/dev/blob'`);
      return blob ? lines(Buffer.from(await blob.arrayBuffer())) : 0;
    },
    close: () => database.close(),
  };
}

export async function withSession<T>(open: () => Promise<SqlSession>, work: (s: SqlSession) => Promise<T>): Promise<T> {
  const session = await open();
  try {
    return await work(session);
  } finally {
    await session.close();
  }
}

/** The rows of COPY's text output: one a line, a newline within a value being written as \n. */
function lines(chunk: Buffer): number {
  let n = 0;
  for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) n++;
  return n;
}
