import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { ReconError } from '../errors.ts';
import { packageRoot } from '../package-root.ts';
import type { Database } from './database.ts';
import { readDefinitions, type Definition } from './definitions.ts';
import type { Schema } from './schema.ts';
import { SQL_STATE, sqlState } from './sql-state.ts';

/**
 * Brings a database to the schema of this version of recon, in one transaction under an advisory lock (concurrent
 * starts, two cron runs or a CLI beside a server, apply it once):
 *
 * - the numbered SQL files of sql/migrations, each once, in order: what holds data (tables, indexes, data moves),
 *   frozen in time, a change being a new file;
 * - the views and functions of sql/recon and sql/reporting, one file each (definitions.ts), whenever any file's text
 *   differs from what the database last applied, or a migration ran: every recorded one is dropped before the
 *   migrations (which may then change the tables under them at will) and every file's definition created after,
 *   in dependency order. Changing a view is a change of its file alone.
 *
 * All or nothing: a failing file leaves the database as it was, its views included, with an error naming the file. A migration whose first line is
 * `-- recon:postgres-only` (roles, grants: PGlite has a single user) is recorded as applied on PGlite without
 * running, so that the numbering stays the same on both backends.
 *
 * Returns what it applied: the migrations' file names, then the definition files that were new or changed.
 */
export const MIGRATION_LOCK = 0x7265636f6e; // "recon"
const POSTGRES_ONLY = '-- recon:postgres-only';

export interface MigrateOptions {
  /** Numbered migrations (sql/migrations by default). */
  readonly migrationsDir?: string;
  /**
   * Where sql/recon and sql/reporting are (sql/ by default); null applies the migrations alone, for a database
   * built as an earlier version left it, whose views the migrations of that version made themselves.
   */
  readonly definitionsRoot?: string | null;
}

export function migrationsDir(): string {
  return path.join(packageRoot(), 'sql', 'migrations');
}

/** The schema of this version of recon: its numbered migrations, and its definitions (null when not applied). */
async function wantedSchema(options: MigrateOptions) {
  const dir = options.migrationsDir ?? migrationsDir();
  const files = (await readdir(dir)).filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name)).sort();
  const definitions = options.definitionsRoot === null ? null : await readDefinitions(options.definitionsRoot);
  return { dir, files, definitions };
}

/**
 * Whether migrate would find nothing to do, by one read: what a caller that must leave a database as it is (a
 * benchmark reading somebody's kept database) checks before it runs a command, since every command migrates.
 */
export async function isMigrated(database: Database, options: MigrateOptions = {}): Promise<boolean> {
  const { files, definitions } = await wantedSchema(options);
  const state = await database.transaction((connection) => readState(connection.db));
  return upToDate(state, files, definitions);
}

export async function migrate(database: Database, options: MigrateOptions = {}): Promise<string[]> {
  const { dir, files, definitions } = await wantedSchema(options);
  // Every command migrates at start: in the usual case, one read finds everything applied and nothing more runs.
  const before = await database.transaction((connection) => readState(connection.db));
  if (upToDate(before, files, definitions)) return [];
  return database.transaction(async (connection) => {
    if (database.kind === 'postgres') await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(connection.db);
    await connection.exec(`
      CREATE SCHEMA IF NOT EXISTS recon;
      CREATE TABLE IF NOT EXISTS recon.schema_migrations (
        name text PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE IF NOT EXISTS recon.schema_definitions (
        file text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('view', 'function')),
        name text NOT NULL,
        sha256 text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      );`);
    // Read again under the lock: a concurrent migrator that got there first is seen.
    const state = await readState(connection.db);
    const pending = files.filter((name) => !state.migrations.has(name));
    const redefine = definitions !== null && (pending.length > 0 || !definitionsCurrent(state, definitions));
    if (redefine) await dropDefinitions(connection.db, [...state.definitions.values(), ...definitions]);
    for (const name of pending) {
      const script = await readFile(path.join(dir, name), 'utf8');
      const skip = database.kind === 'pglite' && script.split('\n', 1)[0]?.trim() === POSTGRES_ONLY;
      if (!skip) {
        await connection.exec(script).catch((error: unknown) => {
          throw new ReconError('MIGRATION', `migration ${name} failed: ${oneLine(error)}`, { cause: error });
        });
      }
      await connection.db.insertInto('recon.schema_migrations').values({ name }).execute();
    }
    if (!redefine) return pending;
    for (const definition of definitions) {
      await connection.exec(definition.script).catch((error: unknown) => {
        throw new ReconError('MIGRATION', `sql/${definition.file} failed: ${oneLine(error)}`, { cause: error });
      });
    }
    await connection.db.deleteFrom('recon.schema_definitions').execute();
    await connection.db
      .insertInto('recon.schema_definitions')
      .values(definitions.map(({ file, kind, name, sha256 }) => ({ file, kind, name, sha256 })))
      .execute();
    const changed = definitions.filter(
      (definition) => state.definitions.get(definition.file)?.sha256 !== definition.sha256,
    );
    return [...pending, ...changed.map((definition) => definition.file)];
  });
}

interface RecordedDefinition {
  readonly kind: 'view' | 'function';
  readonly name: string;
  readonly sha256: string;
}

interface SchemaState {
  readonly migrations: ReadonlySet<string>;
  readonly definitions: ReadonlyMap<string, RecordedDefinition>;
}

function upToDate(state: SchemaState, files: readonly string[], definitions: readonly Definition[] | null): boolean {
  return (
    files.every((name) => state.migrations.has(name)) &&
    (definitions === null || definitionsCurrent(state, definitions))
  );
}

function definitionsCurrent(state: SchemaState, definitions: readonly Definition[]): boolean {
  return (
    state.definitions.size === definitions.length &&
    definitions.every((definition) => state.definitions.get(definition.file)?.sha256 === definition.sha256)
  );
}

/**
 * What a database has applied so far; nothing for one never migrated. The first query of every command, on recon's
 * own transaction like the scripts after it: a server out of reach fails it as ReconError DATABASE naming
 * PostgreSQL, not as a bare pg error.
 */
async function readState(db: Kysely<Schema>): Promise<SchemaState> {
  const {
    rows: [tables],
  } = await sql<{ migrations: boolean; definitions: boolean }>`SELECT
      to_regclass('recon.schema_migrations') IS NOT NULL AS migrations,
      to_regclass('recon.schema_definitions') IS NOT NULL AS definitions`.execute(db);
  const migrations = tables?.migrations
    ? (await db.selectFrom('recon.schema_migrations').select('name').execute()).map((row) => row.name)
    : [];
  const definitions = tables?.definitions
    ? await db.selectFrom('recon.schema_definitions').select(['file', 'kind', 'name', 'sha256']).execute()
    : [];
  return {
    migrations: new Set(migrations),
    definitions: new Map(definitions.map(({ file, ...recorded }) => [file, recorded])),
  };
}

/**
 * Drops every view, then every function, that was recorded or has a file: in one statement each, which PostgreSQL
 * orders itself (a view reading another is dropped with it). Objects of the database before definitions were
 * recorded carry the same names as the files. An object of somebody else's that reads one of them stops the upgrade
 * with PostgreSQL's message naming it: recon never drops what it does not own (no CASCADE).
 */
async function dropDefinitions(db: Kysely<Schema>, known: readonly RecordedDefinition[]): Promise<void> {
  const names = (kind: RecordedDefinition['kind']) => [
    ...new Set(known.filter((object) => object.kind === kind).map((object) => object.name)),
  ];
  const qualified = (name: string) =>
    sql.join(
      name.split('.').map((part) => sql.id(part)),
      sql`.`,
    );
  const views = names('view');
  try {
    if (views.length > 0) await sql`DROP VIEW IF EXISTS ${sql.join(views.map(qualified))}`.execute(db);
    const functionNames = names('function');
    if (functionNames.length === 0) return;
    // Every signature a function of that name has (an older one included): a function is dropped by signature.
    const { rows } = await sql<{ signature: string }>`SELECT p.oid::regprocedure::text AS signature
      FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname || '.' || p.proname = ANY (${functionNames}::text[])`.execute(db);
    if (rows.length > 0) await sql`DROP FUNCTION ${sql.join(rows.map((row) => sql.raw(row.signature)))}`.execute(db);
  } catch (error) {
    if (sqlState(error) === SQL_STATE.dependentObjectsStillExist) {
      throw new ReconError(
        'MIGRATION',
        `cannot re-create recon's views: ${oneLine(error)} (${oneLine((error as { detail?: string }).detail ?? '')}); drop or change that object (recon re-creates its own views on upgrade), then migrate again`,
        { cause: error },
      );
    }
    throw error;
  }
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
}
