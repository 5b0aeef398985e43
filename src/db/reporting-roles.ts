import { sql, type Kysely } from 'kysely';
import type { ReportingRolesConfig } from '../config/config.ts';
import { ReconError } from '../errors.ts';
import type { Database } from './database.ts';
import { MIGRATION_LOCK } from './migrate.ts';
import { publicConnectNotice } from './public-connect.ts';
import type { Schema } from './schema.ts';
import { SQL_STATE, sqlState } from './sql-state.ts';

/** The names the migrations grant to (0006), and the accountant's by default: what a role of another name replaces. */
export const DEFAULT_REPORTING_ROLES: ReportingRolesConfig = { reader: 'recon_reader', accountant: 'recon_accountant' };

const ACTION_FUNCTION = 'reporting.exception_action(text, text, text, text)';

/**
 * Grants this database's reporting schema to the configured roles, after the migrations (PostgreSQL only: PGlite has
 * one user). Roles are cluster-wide while grants are per database: with a reader role of its own, a database is read
 * by its own readers only, and the default role (or the role configured before) loses what it had here.
 *
 * The reader reads every reporting view, and the ones later migrations add; the accountant reads the same and may call
 * reporting.exception_action, nothing else. Both are created NOLOGIN when missing; logins are made members of them.
 *
 * Commands start often: the grants are written only when the roles configured or the schema applied differ from
 * what recon.reporting_grants says was granted last (`force` writes them anyway: `recon migrate`). Having written
 * them, it `warn`s in one line of the databases PUBLIC may still connect to, the readers' logins included
 * (see public-connect.ts): grants keep a reader to the views, not to this database.
 */
export async function grantReportingRoles(
  database: Database,
  roles: ReportingRolesConfig,
  options: { force?: boolean; warn?: (line: string) => void } = {},
): Promise<'granted' | 'unchanged' | 'not on pglite'> {
  if (database.kind === 'pglite') return 'not on pglite';
  if (!options.force && (await grantsCurrent(database.db, roles))) return 'unchanged';
  const result = await database.transaction(async ({ db }) => {
    // The migrations' lock: grants beside a migration, or beside another process granting, would collide on the
    // same catalog rows (tuple concurrently updated).
    await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(db);
    if (!options.force && (await grantsCurrent(db, roles))) return 'unchanged';
    const previous = await db
      .selectFrom('recon.reporting_grants')
      .select(['reader_role', 'accountant_role'])
      .executeTakeFirst();
    // Granting to, or later revoking from, the role recon itself runs as would take recon's own rights away.
    const { rows } = await sql<{ self: string }>`SELECT current_user AS self`.execute(db);
    const self = rows[0]!.self;
    for (const [variable, role] of [
      ['RECON_READER_ROLE', roles.reader],
      ['RECON_ACCOUNTANT_ROLE', roles.accountant],
    ] as const) {
      if (role === self) {
        throw new ReconError(
          'CONFIG',
          `${variable} names ${role}, the role recon connects as: readers need a role of their own, granted to their logins`,
        );
      }
    }
    const configured = new Set([roles.reader, roles.accountant]);
    const stale = new Set(
      [
        DEFAULT_REPORTING_ROLES.reader,
        DEFAULT_REPORTING_ROLES.accountant,
        previous?.reader_role,
        previous?.accountant_role,
      ].filter((role): role is string => role !== undefined && !configured.has(role) && role !== self),
    );
    // Taken away first: a role configured now that held another part before (a former accountant now the reader)
    // then gets exactly its new part below.
    for (const role of [...stale, ...configured]) if (await roleExists(db, role)) await revokeAll(db, role);
    for (const role of configured) await createRole(db, role);
    for (const role of configured) await grantReading(db, role);
    await sql`GRANT EXECUTE ON FUNCTION ${sql.raw(ACTION_FUNCTION)} TO ${sql.id(roles.accountant)}`.execute(db);
    const migration = await schemaVersion(db);
    await db
      .insertInto('recon.reporting_grants')
      .values({ reader_role: roles.reader, accountant_role: roles.accountant, migration })
      .onConflict((oc) =>
        oc.column('singleton').doUpdateSet({
          reader_role: roles.reader,
          accountant_role: roles.accountant,
          migration,
          granted_at: sql<Date>`now()`,
        }),
      )
      .execute();
    return 'granted' as const;
  });
  if (result === 'granted' && options.warn) {
    const notice = await publicConnectNotice(database.db, roles);
    if (notice !== null) options.warn(notice);
  }
  return result;
}

async function grantsCurrent(db: Kysely<Schema>, roles: ReportingRolesConfig): Promise<boolean> {
  const granted = await db
    .selectFrom('recon.reporting_grants')
    .select(['reader_role', 'accountant_role', 'migration'])
    .executeTakeFirst();
  return (
    granted?.reader_role === roles.reader &&
    granted.accountant_role === roles.accountant &&
    granted.migration === (await schemaVersion(db))
  );
}

/**
 * The schema the grants were written for: the last migration, and the definitions applied (re-creating a view drops
 * its grants, and the accountant's EXECUTE on reporting.exception_action).
 */
async function schemaVersion(db: Kysely<Schema>): Promise<string> {
  const { rows } = await sql<{ version: string }>`SELECT
      coalesce((SELECT max(name) FROM recon.schema_migrations), '') || ' '
      || coalesce((SELECT md5(string_agg(file || ' ' || sha256, ',' ORDER BY file)) FROM recon.schema_definitions), '')
      AS version`.execute(db);
  return rows[0]!.version;
}

async function roleExists(db: Kysely<Schema>, role: string): Promise<boolean> {
  const { rows } = await sql<{ present: boolean }>`SELECT EXISTS (SELECT FROM pg_catalog.pg_roles
    WHERE rolname = ${role}) AS present`.execute(db);
  return rows[0]?.present === true;
}

/**
 * CREATE ROLE is cluster-wide: another database migrating at once may create the same role. The loser of that race
 * waits for the winner's commit and fails on pg_authid's unique index (or with duplicate_object): either way the role
 * exists, which is all this needs, and the savepoint keeps the transaction usable.
 */
async function createRole(db: Kysely<Schema>, role: string): Promise<void> {
  if (await roleExists(db, role)) return;
  await sql`SAVEPOINT create_role`.execute(db);
  try {
    await sql`CREATE ROLE ${sql.id(role)} NOLOGIN`.execute(db);
    await sql`RELEASE SAVEPOINT create_role`.execute(db);
  } catch (error) {
    await sql`ROLLBACK TO SAVEPOINT create_role`.execute(db);
    const state = sqlState(error);
    if (state === SQL_STATE.uniqueViolation || state === SQL_STATE.duplicateObject) return;
    if (state === SQL_STATE.insufficientPrivilege) {
      throw new ReconError(
        'CONFIG',
        `role ${role} does not exist and recon's database user may not create it: run CREATE ROLE ${role} NOLOGIN as a superuser, or grant CREATEROLE`,
        { cause: error },
      );
    }
    throw error;
  }
}

async function grantReading(db: Kysely<Schema>, role: string): Promise<void> {
  const id = sql.id(role);
  await sql`GRANT USAGE ON SCHEMA reporting TO ${id}`.execute(db);
  await sql`GRANT SELECT ON ALL TABLES IN SCHEMA reporting TO ${id}`.execute(db);
  // Views a later migration adds (created by this same role) are readable too.
  await sql`ALTER DEFAULT PRIVILEGES IN SCHEMA reporting GRANT SELECT ON TABLES TO ${id}`.execute(db);
}

/** Everything this database granted the role; its grants in other databases are theirs. */
async function revokeAll(db: Kysely<Schema>, role: string): Promise<void> {
  const id = sql.id(role);
  await sql`REVOKE EXECUTE ON FUNCTION ${sql.raw(ACTION_FUNCTION)} FROM ${id}`.execute(db);
  await sql`ALTER DEFAULT PRIVILEGES IN SCHEMA reporting REVOKE SELECT ON TABLES FROM ${id}`.execute(db);
  await sql`REVOKE SELECT ON ALL TABLES IN SCHEMA reporting FROM ${id}`.execute(db);
  await sql`REVOKE USAGE ON SCHEMA reporting FROM ${id}`.execute(db);
}
