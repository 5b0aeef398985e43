import type { PGlite } from '@electric-sql/pglite';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Schema } from './schema.ts';

/**
 * recon's handle on its database, the same whether it is a PostgreSQL server or embedded PGlite.
 * Kysely serves ordinary queries; `transaction` hands out one connection, inside BEGIN/COMMIT, spoken to two
 * ways: Kysely (`connection.db`) for statements, the raw side for what Kysely does not cover (COPY, scripts).
 *
 * Which transaction: `database.transaction(work)` when the work needs that connection's raw side, a COPY or a
 * script beside its statements (loads, imports, migrations); `db.transaction().execute(...)` when it is Kysely
 * statements only, typed against the schema with nothing else to reach for.
 */
export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly db: Kysely<Schema>;
  /** Runs `work` on one connection inside BEGIN/COMMIT; rolls back when it throws. A connection that cannot be had is ReconError DATABASE. */
  transaction<T>(work: (connection: Connection) => Promise<T>): Promise<T>;
  /**
   * One statement with parameters, or a script of several without, on any connection, outside recon's
   * transactions: for a library that brings its own SQL (the job queue), which Kysely's prepared statements
   * would refuse as soon as a script holds two statements. The rows of every statement, in order.
   */
  rawQuery<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<{ rows: Row[] }>;
  /** The embedded instance, for a library that brings its own PGlite adapter (the job queue); absent on PostgreSQL. */
  readonly pglite?: PGlite;
  close(): Promise<void>;
}

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

export interface Connection {
  readonly kind: Database['kind'];
  /** Kysely on this very connection and transaction: what it builds runs between the COPYs, not beside them. */
  readonly db: Kysely<Schema>;
  /**
   * One statement on the connection: what `db` compiles its queries to runs here (connection-dialect.ts). recon's
   * own statements go through `db`, so that they are typed against the schema.
   */
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
  /** Several statements separated by `;`, no parameters (migrations). */
  exec(script: string): Promise<void>;
  /**
   * Feeds COPY ... FROM STDIN text-format data. `copySql` must read `FROM STDIN`; on PGlite it is
   * rewritten to read the data as a blob, in batches of about `batchBytes`.
   */
  copyFrom(
    copySql: string,
    data: Readable | AsyncIterable<string | Buffer>,
    options?: { batchBytes?: number },
  ): Promise<void>;
}
