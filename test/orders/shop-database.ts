import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The merchant's own database for sync-orders tests: a second, real PostgreSQL database beside recon's (on the
 * server of DATABASE_URL), created per suite and dropped after it.
 */
export const SHOP_COLUMNS = 'order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at';

export interface ShopDatabase {
  /** Its URL as DATABASE_URL writes it. */
  readonly url: string;
  /** The same with a password in it (DATABASE_URL's own, or one a trusting server ignores): recon must never show it. */
  readonly urlWithPassword: string;
  readonly password: string;
  /** How recon names it: host:port/database. */
  readonly name: string;
  exec(sql: string): Promise<void>;
  count(table: string): Promise<number>;
  /** The backends of this database waiting for a lock, once there is one (polled: the wait is what is awaited). */
  waitForLockWaiter(): Promise<{ pid: number }[]>;
  /**
   * A table of `count` good orders `<prefix><n>` (id n): amount n*100+5 EUR, the five statuses in turn (n % 5),
   * refunded in full for `refunded` and 100 for `partially_refunded`, wallet for even n, created n minutes after
   * 2024-05-01 00:00:00.123456Z.
   */
  createTable(table: string, prefix: string, count: number): Promise<void>;
  drop(): Promise<void>;
}

export async function createShopDatabase(): Promise<ShopDatabase> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL is required for the merchant database of sync-orders tests');
  const dbName = `shop_test_${randomBytes(6).toString('hex')}`;
  await runOnce(adminUrl, `CREATE DATABASE ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const withPassword = new URL(url);
  if (!withPassword.password) withPassword.password = 'never-shown-anywhere';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  return {
    url: url.toString(),
    urlWithPassword: withPassword.toString(),
    password: decodeURIComponent(withPassword.password),
    name: `${url.host}/${dbName}`,
    async exec(sql) {
      await client.query(sql);
    },
    async count(table) {
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      return rows[0]!.n;
    },
    async waitForLockWaiter() {
      for (;;) {
        const { rows } = await client.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        if (rows.length > 0) return rows;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async createTable(table, prefix, count) {
      await client.query(`
        CREATE TABLE ${table} (
          id integer PRIMARY KEY, order_id text, amount_minor bigint, currency text, status text, refunded_minor bigint,
          payment_method text, created_at timestamptz
        );
        INSERT INTO ${table}
        SELECT n, '${prefix}' || n, n * 100 + 5, 'EUR', (ARRAY['paid', 'authorized', 'cancelled', 'refunded', 'partially_refunded'])[n % 5 + 1],
               CASE n % 5 WHEN 3 THEN n * 100 + 5 WHEN 4 THEN 100 ELSE 0 END, CASE WHEN n % 2 = 0 THEN 'wallet' ELSE 'instalment' END,
               timestamptz '2024-05-01 00:00:00.123456+00' + n * interval '1 minute'
        FROM generate_series(1, ${count}) AS n`);
    },
    async drop() {
      await client.end();
      await runOnce(adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    },
  };
}

async function runOnce(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
