import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { formatMinorUnits, type MerchantOrder } from '@recon/sandbox';
import type { Database } from '../src/db/database.ts';
import { importOrderFiles } from '../pipelines/import-orders.ts';
import type { IngestLimits } from '../src/config/config.ts';

/**
 * The merchant's books: the orders as the shop records them, which recon imports through `recon import-orders`'s own
 * pipeline (a csv file each time some changed). Orders the shop never booked stay out of them.
 */
export interface Books {
  get(orderId: string): MerchantOrder | undefined;
  /** The order as recon last imported it: what a reconciliation judges against. */
  imported(orderId: string): MerchantOrder | undefined;
  all(): MerchantOrder[];
  /** Books or rebooks an order; imported with the next `importChanges`. */
  put(order: MerchantOrder): void;
  /** Imports what changed since the last import; returns how many orders it wrote. */
  importChanges(database: Database): Promise<number>;
}

const COLUMNS = ['order_id', 'amount', 'currency', 'status', 'refunded_amount', 'payment_method', 'created_at'];

export function createBooks(folder: string, limits: IngestLimits): Books {
  const orders = new Map<string, MerchantOrder>();
  const importedOrders = new Map<string, MerchantOrder>();
  const changed = new Set<string>();
  let imports = 0;
  return {
    get: (orderId) => orders.get(orderId),
    imported: (orderId) => importedOrders.get(orderId),
    all: () => [...orders.values()],
    put(order) {
      orders.set(order.orderId, order);
      changed.add(order.orderId);
    },
    async importChanges(database) {
      if (changed.size === 0) return 0;
      const rows = [...changed].sort().map((orderId) => {
        const order = orders.get(orderId)!;
        return [
          order.orderId,
          formatMinorUnits(order.amount, order.currency),
          order.currency,
          order.status,
          formatMinorUnits(order.refunded, order.currency),
          order.paymentMethod,
          order.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        ].join(';');
      });
      const file = path.join(folder, `orders-${String(++imports).padStart(4, '0')}.csv`);
      await writeFile(file, [COLUMNS.join(';'), ...rows, ''].join('\n'));
      const [result] = await importOrderFiles(database, [file], { limits });
      if (result?.status !== 'loaded')
        throw new Error(`the merchant's orders did not import: ${JSON.stringify(result)}`);
      if (result.rejected > 0) {
        const rejected = await database.db
          .selectFrom('recon.rejected_order_rows')
          .select(['raw', 'reason'])
          .where('import_id', '=', result.importId)
          .execute();
        throw new Error(
          `recon rejected orders of the books: ${rejected.map((row) => `${row.raw}: ${row.reason}`).join('; ')}`,
        );
      }
      const written = changed.size;
      for (const orderId of changed) importedOrders.set(orderId, orders.get(orderId)!);
      changed.clear();
      return written;
    },
  };
}
