import path from 'node:path';
import { parseArgs } from 'node:util';
import { databaseName, HISTORY_DATABASE } from './bench-database.ts';

/** bench:reporting's command line, checked: the options of bench:history where it has them. */
export interface ReportingOptions {
  /** The backends measured, in this order: PostgreSQL's history then PGlite's. */
  backends: Array<'postgres' | 'pglite'>;
  orders: number;
  pgliteOrders: number;
  database: string;
  /** Reads the databases left by an earlier run (or bench:history --keep) as they are, and leaves them. */
  keep: boolean;
  /** With --keep, recon's data directory of the PGlite history; without, it is built in a temporary one. */
  pgliteDir: string | undefined;
  json: boolean;
}

/** Where --keep keeps the PGlite history, as HISTORY_DATABASE names PostgreSQL's. */
export const PGLITE_DIR_NAME = 'recon-bench-history-pglite';

export function reportingOptions(argv: string[], tmpDir: string): ReportingOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string' },
      orders: { type: 'string', default: '1000000' },
      'pglite-orders': { type: 'string', default: '100000' },
      database: { type: 'string', default: HISTORY_DATABASE },
      keep: { type: 'boolean', default: false },
      'pglite-dir': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const only = values.only;
  if (only !== undefined && only !== 'postgres' && only !== 'pglite')
    throw new Error(`--only must be postgres or pglite, got '${only}'`);
  if (values['pglite-dir'] !== undefined && !values.keep)
    throw new Error('--pglite-dir names where --keep keeps the PGlite database: pass --keep with it');
  return {
    backends: only ? [only] : ['postgres', 'pglite'],
    orders: positive('orders', values.orders),
    pgliteOrders: positive('pglite-orders', values['pglite-orders']),
    database: databaseName(values.database),
    keep: values.keep,
    pgliteDir: values.keep ? path.resolve(values['pglite-dir'] ?? path.join(tmpDir, PGLITE_DIR_NAME)) : undefined,
    json: values.json,
  };
}

function positive(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got '${value}'`);
  return n;
}
