import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { QueryResult as ConnectionResult } from './database.ts';
import type { Schema } from './schema.ts';

/** What the dialect needs of a recon connection: its one way to run a statement with parameters. */
interface Queryable {
  query<Row>(text: string, params?: readonly unknown[]): Promise<ConnectionResult<Row>>;
}

/**
 * Kysely on a connection that is already inside recon's transaction, for PostgreSQL and PGlite alike: the
 * statements it builds run on the same connection, in the same transaction, as the COPY beside them. It never
 * opens a transaction of its own (the caller's BEGIN/COMMIT owns that), and has no second connection to hand out.
 */
export function kyselyOn(connection: Queryable): Kysely<Schema> {
  const databaseConnection: DatabaseConnection = {
    async executeQuery<R>(compiled: { sql: string; parameters: readonly unknown[] }): Promise<QueryResult<R>> {
      const result = await connection.query<R>(compiled.sql, compiled.parameters);
      return { rows: result.rows, numAffectedRows: BigInt(result.rowCount) };
    },
    streamQuery() {
      throw new Error('streaming is not offered on a transaction connection');
    },
  };
  const refuseTransaction = () => Promise.reject(new Error("this Kysely already runs inside the caller's transaction"));
  const driver: Driver = {
    init: () => Promise.resolve(),
    acquireConnection: () => Promise.resolve(databaseConnection),
    beginTransaction: refuseTransaction,
    commitTransaction: refuseTransaction,
    rollbackTransaction: refuseTransaction,
    releaseConnection: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
  const dialect: Dialect = {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => driver,
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
  return new Kysely<Schema>({ dialect });
}
