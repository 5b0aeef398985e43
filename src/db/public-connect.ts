import { sql, type Kysely } from 'kysely';
import type { ReportingRolesConfig } from '../config/config.ts';
import type { Schema } from './schema.ts';

/** The databases named in the line; a server of hundreds gets a count for the rest. */
const NAMED = 10;

/**
 * PostgreSQL gives PUBLIC CONNECT on every new database, so a login in the reader role may connect to every database
 * of the server nobody closed, this one and the others. recon cannot close them itself (its user is rarely a
 * superuser, and the other databases are not recon's): this says which are open and what a superuser runs, in one
 * line, or null when none is. Templates are left out: nobody's data lives there.
 */
export async function publicConnectNotice(db: Kysely<Schema>, roles: ReportingRolesConfig): Promise<string | null> {
  const { rows } = await sql<{ name: string; here: boolean; total: number }>`
    SELECT quote_ident(datname) AS name, datname = current_database() AS here, count(*) OVER ()::int AS total
    FROM pg_catalog.pg_database
    WHERE datallowconn AND NOT datistemplate AND has_database_privilege('public', oid, 'CONNECT')
    ORDER BY datname = current_database() DESC, datname
    LIMIT ${NAMED}`.execute(db);
  if (rows.length === 0) return null;
  const total = rows[0]!.total;
  const names = rows.map((row) => row.name).join(', ');
  const more = total - rows.length;
  const here = rows.find((row) => row.here);
  // Recon's own user needs CONNECT too once PUBLIC has none, unless it owns the database or is a superuser.
  const { rows: who } = await sql<{ grantees: string }>`SELECT concat_ws(', ', quote_ident(${roles.reader}),
    quote_ident(${roles.accountant}), quote_ident(current_user)) AS grantees`.execute(db);
  return (
    `PUBLIC may still CONNECT to ${total} database${total === 1 ? '' : 's'} of this server ` +
    `(${names}${more > 0 ? ` and ${more} more` : ''}): ` +
    `a login in ${roles.reader} or ${roles.accountant} may connect to each. As a superuser: ` +
    `REVOKE CONNECT ON DATABASE ${names} FROM PUBLIC;` +
    (more > 0 ? ` the same for the ${more} more;` : '') +
    (here ? ` GRANT CONNECT ON DATABASE ${here.name} TO ${who[0]!.grantees};` : '') +
    (total > (here ? 1 : 0) ? ' then grant CONNECT on the others to their own users;' : '') +
    ' see docs/operations.md#roles-per-database'
  );
}
