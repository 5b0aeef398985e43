import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { pipeline } from 'node:stream/promises';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import { ReconError } from '../errors.ts';
import { kyselyOn } from './connection-dialect.ts';
import type { Connection, Database } from './database.ts';
import { pgliteSettingsOptions } from './pglite-settings.ts';
import { pgliteTemplateFor } from './pglite-template.ts';
import type { Schema } from './schema.ts';

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent, embedded PGlite under `dataDir/pgdata`. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(path.join(options.dataDir, 'pgdata'));
}

function openPostgres(connectionString: string): Database {
  // recon serve shares one pool between the receiver (an upload holds a connection until it is stored), the job
  // queue's polling and heartbeats, the worker's ingest and /metrics: ten keeps a few slow uploads from starving the
  // heartbeats (a job whose heartbeat lapses is handed to another worker).
  // A load stages a chunk of up to 100,000 rows (about 25 MB) in a temporary table: with the default 8 MB of buffers
  // for temporary tables, most of each chunk was written out to disk and read back for its merge. The memory is the
  // server's, taken as a session uses it; options in the connection string take precedence over these.
  // No wait without an end: a connection that cannot be had within 30 s (every one taken, or a server that does not
  // answer) fails the query, which is retried where that is safe, instead of queueing it forever.
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    connectionTimeoutMillis: 30_000,
    options: '-c temp_buffers=32MB',
  });
  // An idle client's connection can drop (server restart); without a listener that error kills the process.
  pool.on('error', () => {});
  // So can a client's taken out of the pool (a transaction between two statements, while it reads the next batch of
  // a file): the pool listens to its idle clients only, and pg emits the error on the client. Heard here, the client
  // is merely unusable: its next statement fails as a lost connection does, and the pool drops it when it returns.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });

  return {
    kind: 'postgres',
    db,
    async transaction(work) {
      const client = await pool.connect().catch((error: unknown) => {
        throw new ReconError(
          'DATABASE',
          `cannot connect to PostgreSQL: ${(error as Error).message}: check that the server DATABASE_URL names is up and takes connections`,
          { cause: error },
        );
      });
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work(postgresConnection(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async rawQuery<Row>(text: string, params?: readonly unknown[]) {
      const result: pg.QueryResult | pg.QueryResult[] = await pool.query(text, params as unknown[] | undefined);
      // A script answers with one result per statement; the caller gets the rows of every one, in order (pg-boss
      // finds its advisory lock's row among them).
      const results: pg.QueryResult[] = Array.isArray(result) ? result : [result];
      return { rows: results.flatMap((each) => each.rows as Row[]) };
    },
    async close() {
      await db.destroy();
      // Kysely ends the pool only once it has run a query itself: a command that only used transaction()
      // (recon migrate) would otherwise keep an idle client open and exit after the pool's 10 s idle timeout.
      if (!pool.ending) await pool.end();
    },
  };
}

function postgresConnection(client: pg.PoolClient): Connection {
  return withKysely({
    kind: 'postgres',
    async query<Row>(text: string, params?: readonly unknown[]) {
      const result = await client.query(text, params as unknown[] | undefined);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async exec(script) {
      await client.query(script);
    },
    async copyFrom(copySql, data) {
      await pipeline(toReadable(data), client.query(copyFromStdin(copySql)));
    },
  });
}

/**
 * PGlite reads bigint as a JS number, which silently rounds past 2^53: money would pass through a float. Like
 * `pg`, return bigint and numeric as their text, so both backends hand recon the same strings.
 */
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const AS_TEXT_LIKE_PG = { [INT8_OID]: (text: string) => text, [NUMERIC_OID]: (text: string) => text };

async function openPglite(dataDir: string): Promise<Database> {
  mkdirSync(dataDir, { recursive: true });
  // Loaded only here: a command on PostgreSQL should not pay for loading the wasm module.
  const { PGlite } = await import('@electric-sql/pglite');
  const options = {
    parsers: AS_TEXT_LIKE_PG,
    ...pgliteSettingsOptions(PGlite.defaultStartParams),
    loadDataDir: await pgliteTemplateFor(dataDir),
  };
  const pglite = await PGlite.create(dataDir, options).catch((error: unknown) => {
    throw new ReconError('DATABASE', `cannot open the embedded database in ${dataDir}: ${(error as Error).message}`, {
      cause: error,
    });
  });
  const db = new Kysely<Schema>({ dialect: new PGliteDialect({ pglite }) });

  return {
    kind: 'pglite',
    db,
    pglite,
    transaction(work) {
      return pglite.transaction((tx) => work(pgliteConnection(tx)));
    },
    async rawQuery<Row>(text: string, params?: readonly unknown[]) {
      if (params && params.length > 0) return { rows: (await pglite.query<Row>(text, params as unknown[])).rows };
      const results = await pglite.exec(text);
      return { rows: results.flatMap((each) => each.rows) as Row[] };
    },
    async close() {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}

type PgliteQueryable = Pick<PGlite, 'query' | 'exec'>;

function pgliteConnection(tx: PgliteQueryable): Connection {
  return withKysely({
    kind: 'pglite',
    async query<Row>(text: string, params?: readonly unknown[]) {
      const result = await tx.query<Row>(text, params as unknown[] | undefined);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(script) {
      await tx.exec(script);
    },
    async copyFrom(copySql, data, options) {
      // PGlite has no COPY FROM STDIN; it reads COPY data from a Blob attached to the query instead.
      const blobSql = copySql.replace(/\bFROM\s+STDIN\b/i, "FROM '/dev/blob'");
      // A batch is held three times at the flush (its text, the Blob, PGlite's ArrayBuffer of the Blob): 4 MiB
      // keeps that small at the speed of bigger batches (docs/benchmarks.md).
      const batchBytes = options?.batchBytes ?? 4 * 1024 * 1024;
      let chunks: (string | Buffer)[] = [];
      let size = 0;
      const flush = async () => {
        if (size === 0) return;
        await tx.query(blobSql, [], { blob: new Blob(chunks) });
        chunks = [];
        size = 0;
      };
      // Batches must end on a row boundary: COPY text rows end with a newline, so cut after the last one.
      // A StringDecoder keeps a UTF-8 character split across two chunks whole.
      const decoder = new StringDecoder('utf8');
      let carry = '';
      for await (const chunk of toReadable(data)) {
        const text = carry + (typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer));
        const cut = text.lastIndexOf('\n') + 1;
        carry = text.slice(cut);
        if (cut > 0) {
          chunks.push(text.slice(0, cut));
          size += cut;
        }
        if (size >= batchBytes) await flush();
      }
      carry += decoder.end();
      if (carry) {
        chunks.push(carry + '\n');
        size += carry.length + 1;
      }
      await flush();
    },
  });
}

/** Adds `db`, built on first use: most transactions never ask for it. */
function withKysely(raw: Omit<Connection, 'db'>): Connection {
  let db: Connection['db'] | undefined;
  return {
    ...raw,
    get db() {
      return (db ??= kyselyOn(raw));
    },
  };
}

function toReadable(data: Readable | AsyncIterable<string | Buffer>): Readable {
  return data instanceof Readable ? data : Readable.from(data);
}
