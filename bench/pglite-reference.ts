/**
 * `node bench/pglite-reference.ts DATA_DIR`: the bare SQL join of bench:reconcile on the PGlite database recon keeps
 * under DATA_DIR, run as a process of its own. What `psql -c` is on PostgreSQL: a process that opens the database,
 * runs the one statement and ends, so that it pays the same opening of the embedded database as recon's command.
 */
import { openDatabase } from '../src/db/open-database.ts';
import { REFERENCE_RECONCILE } from './reconcile-reference-sql.ts';

const dataDir = process.argv[2];
if (!dataDir) {
  console.error('usage: node bench/pglite-reference.ts DATA_DIR');
  process.exit(1);
}
const database = await openDatabase({ databaseUrl: undefined, dataDir });
try {
  await database.pglite!.query(REFERENCE_RECONCILE);
} finally {
  await database.close();
}
