import { sql } from 'kysely';
import { alertSecrets } from '../src/alerts/alert-secrets.ts';
import type { Config } from '../src/config/config.ts';
import { createLogger } from '../src/log/create-logger.ts';
import type { Logger } from '../src/log/logger.ts';
import type { Database } from '../src/db/database.ts';
import { withOutageLog, type OutageLogger } from '../src/log/outage-logger.ts';
import { connectionPassword } from '../src/log/redaction.ts';
import type { CommandContext } from './command.ts';

/**
 * The logger of `recon serve` and `recon worker`: records on stdout at RECON_LOG_LEVEL, JSON lines unless stdout is
 * a terminal, and never the values of the accounts' secrets or the databases' passwords, wherever they would appear.
 */
export function serviceLogger(ctx: CommandContext, config: Config, name: string): Logger {
  return createLogger({
    level: config.log.level,
    stream: ctx.stdout,
    name,
    secrets: [
      ...config.service.secrets,
      connectionPassword(config.databaseUrl),
      connectionPassword(config.orders.databaseUrl),
      // The webhook's token-bearing path and the SMTP relay's password.
      ...alertSecrets(config),
    ],
  });
}

/**
 * `log` for everything `recon serve` and `recon worker` run on `database`: a database outage is told once when it
 * starts, counted while it lasts and told when it ends (outage-logger.ts), rather than once per error of each of
 * its parts. Stop it before the database is closed.
 */
export function withDatabaseOutageLog(log: Logger, database: Database): OutageLogger {
  return withOutageLog(log, { probe: () => database.db.selectNoFrom(sql<number>`1`.as('one')).execute() });
}
