import type { Config } from '../config/config.ts';
import type { Database } from './database.ts';
import { migrate } from './migrate.ts';
import { grantReportingRoles } from './reporting-roles.ts';

/**
 * What every command does with the database before its work: apply pending migrations, then grant the reporting
 * schema to this database's roles (PostgreSQL only; written only when something changed). Returns the files applied.
 * `warn` hears what the roles step leaves open (the databases PUBLIC may still connect to), when it writes grants.
 */
export async function prepareDatabase(
  database: Database,
  config: Pick<Config, 'reportingRoles'>,
  options: { forceGrants?: boolean; warn?: (line: string) => void } = {},
): Promise<string[]> {
  const applied = await migrate(database);
  await grantReportingRoles(database, config.reportingRoles, {
    force: options.forceGrants ?? false,
    warn: options.warn,
  });
  return applied;
}
