import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import type { OrderStatus, PaymentMethod } from '../../src/db/schema.ts';

/** Builders of reconciliation test data: orders straight into recon.orders, transactions through real ingest. */
export interface TestOrder {
  readonly id: string;
  readonly amount: bigint;
  readonly currency?: string;
  readonly status: OrderStatus;
  readonly refunded?: bigint;
  readonly method?: PaymentMethod;
  readonly createdAt: Date;
}

export interface TestTransaction {
  readonly id: string;
  readonly orderId: string;
  readonly type: 'payment' | 'authorization' | 'capture' | 'refund';
  /** Major units as the export writes them, e.g. "100.00". */
  readonly amount: string;
  /** EUR when absent; '' leaves the CURRENCY empty. */
  readonly currency?: string;
  /** BILLINGFEES INCL. VAT, in major units; the export has no such column when no transaction says one. */
  readonly fees?: string;
  readonly exec: string;
  readonly at: Date;
  readonly schedule?: string;
  /** The account (IDENTIFIER) it went through; the export has no IDENTIFIER column when no transaction says one. */
  readonly identifier?: string;
}

export async function insertOrders(database: Database, orders: readonly TestOrder[]): Promise<void> {
  const db = database.db;
  const { import_id } = await db
    .insertInto('recon.order_imports')
    .values({ source: 'file', name: 'test-orders.csv', status: 'loaded', finished_at: new Date() })
    .returning('import_id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('recon.orders')
    .values(
      orders.map((order, index) => ({
        order_id: order.id,
        amount_minor: order.amount.toString(),
        currency: order.currency ?? 'EUR',
        status: order.status,
        refunded_minor: (order.refunded ?? 0n).toString(),
        payment_method: order.method ?? 'wallet',
        created_at: order.createdAt,
        import_id: String(import_id),
        line: index + 2,
      })),
    )
    .onConflict((oc) =>
      oc.column('order_id').doUpdateSet((eb) => ({
        amount_minor: eb.ref('excluded.amount_minor'),
        status: eb.ref('excluded.status'),
        refunded_minor: eb.ref('excluded.refunded_minor'),
        created_at: eb.ref('excluded.created_at'),
        // As recon's own import does: a changed order carries the import that changed it.
        import_id: eb.ref('excluded.import_id'),
        updated_at: sql<Date>`now()`,
      })),
    )
    .execute();
}

let exportCount = 0;

/** Writes the transactions as a service export (`;`, UTC wall time) in `dir` and ingests it. */
export async function ingestTransactions(
  database: Database,
  dir: string,
  transactions: readonly TestTransaction[],
): Promise<string> {
  const accounts = transactions.some((t) => t.identifier !== undefined);
  const fees = transactions.some((t) => t.fees !== undefined);
  const header = `TRANSACTIONID;ORDERID;OPERATIONTYPE;DATE;AMOUNT;CURRENCY;EXECCODE;SCHEDULE${accounts ? ';IDENTIFIER' : ''}${fees ? ';BILLINGFEES INCL. VAT' : ''}`;
  const lines = transactions.map((t) =>
    [
      t.id,
      t.orderId,
      t.type,
      wallTime(t.at),
      t.amount,
      t.currency ?? 'EUR',
      t.exec,
      t.schedule ?? '',
      ...(accounts ? [t.identifier ?? ''] : []),
      ...(fees ? [t.fees ?? ''] : []),
    ].join(';'),
  );
  const file = path.join(dir, `export-${process.pid}-${++exportCount}.csv`);
  await writeFile(file, [header, ...lines, ''].join('\n'));
  const [result] = await ingestFiles(database, [file], { timezone: 'UTC', limits: loadConfig({}).limits });
  if (result?.status !== 'loaded' || result.rejected > 0)
    throw new Error(`test export did not load: ${JSON.stringify(result)}`);
  return file;
}

function wallTime(at: Date): string {
  return at.toISOString().slice(0, 19).replace('T', ' ');
}

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const ago = (asOf: Date, ms: number) => new Date(asOf.getTime() - ms);
