import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

export const OPTIONS = { help: { type: 'boolean', short: 'h' } } as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(
      'usage: recon migrate\n\nApplies the pending SQL migrations of sql/migrations to DATABASE_URL (or the embedded database), then grants the\nreporting schema to RECON_READER_ROLE and RECON_ACCOUNTANT_ROLE (PostgreSQL only).\n',
    );
    return EXIT.ok;
  }
  const config = loadConfig(ctx.env);
  const database = await openDatabase(config);
  try {
    // Grants always, whatever was granted before: the way to restore grants someone changed by hand.
    const applied = await prepareDatabase(database, config, {
      forceGrants: true,
      warn: (line) => ctx.stderr.write(`recon migrate: warning: ${line}\n`),
    });
    ctx.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n');
    return EXIT.ok;
  } finally {
    await database.close();
  }
}
