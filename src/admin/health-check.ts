import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/** /healthz says unhealthy when the database does not answer within this. */
const HEALTH_CHECK_MS = 3_000;

export type Health = { readonly healthy: true } | { readonly healthy: false; readonly reason: string };

/** Healthy when the database answers a query in time; otherwise the failure, on one line. */
export async function checkDatabase(db: Kysely<Schema>, timeoutMs = HEALTH_CHECK_MS): Promise<Health> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      sql`SELECT 1`.execute(db),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      }),
    ]);
    return { healthy: true };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { healthy: false, reason: `database unreachable: ${message.replace(/\s*\n\s*/g, ' ')}` };
  } finally {
    clearTimeout(timer);
  }
}
