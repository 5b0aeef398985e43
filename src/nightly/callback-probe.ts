import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { isUniqueViolation } from '../db/sql-state.ts';
import { generateToken } from '../receive/export-token.ts';

/** The probe's request waits this long for an answer. */
const PROBE_TIMEOUT_MS = 10_000;
/** Probes are kept this long, for `recon runs` and an operator's questions. */
const PROBE_RETENTION_DAYS = 30;
const PROBE_TOKEN_LENGTH = 24;

export interface CallbackProbeResult {
  readonly callbackBaseUrl: string;
  readonly reachable: boolean;
  /** One line: what answered, or what failed. */
  readonly detail: string;
  readonly checkedAt: Date;
}

export interface ProbeOptions {
  readonly reason: 'serve start' | 'nightly run';
  readonly nightlyRunId?: string;
  readonly timeoutMs?: number;
  readonly now?: () => Date;
}

/**
 * Checks that RECON_CALLBACK_BASE_URL reaches recon's receiver, the way the service's deliveries will: a POST to
 * the base plus a fresh token of recon.callback_probes, which only a receiver on this database recognises and
 * marks received. A wrong host, a proxy routing elsewhere or a receiver down shows at once, not as an export that
 * never arrives hours later. For a nightly run, probes once however many workers advance it (undefined when
 * another did).
 */
export async function probeCallbackBase(
  db: Kysely<Schema>,
  callbackBaseUrl: string,
  options: ProbeOptions,
): Promise<CallbackProbeResult | undefined> {
  const now = options.now ?? (() => new Date());
  const token = generateToken(PROBE_TOKEN_LENGTH);
  await db
    .deleteFrom('recon.callback_probes')
    .where('sent_at', '<', new Date(now().getTime() - PROBE_RETENTION_DAYS * 86_400_000))
    .execute();
  let probeId: string;
  try {
    const row = await db
      .insertInto('recon.callback_probes')
      .values({
        token,
        callback_base_url: callbackBaseUrl,
        reason: options.reason,
        nightly_run_id: options.nightlyRunId ?? null,
        sent_at: now(),
      })
      .returning('probe_id')
      .executeTakeFirstOrThrow();
    probeId = String(row.probe_id);
  } catch (error) {
    if (options.nightlyRunId !== undefined && isUniqueViolation(error)) return undefined;
    throw error;
  }
  const answered = await post(`${callbackBaseUrl}${token}`, options.timeoutMs ?? PROBE_TIMEOUT_MS);
  const { received_at: receivedAt } = await db
    .selectFrom('recon.callback_probes')
    .select('received_at')
    .where('probe_id', '=', probeId)
    .executeTakeFirstOrThrow();
  const reachable = answered.ok && receivedAt !== null;
  const detail = reachable
    ? `a recon receiver answered ${answered.detail}`
    : answered.ok
      ? `${answered.detail}, but no recon receiver on this database got the probe: the URL leads to another server`
      : answered.detail;
  const checkedAt = now();
  await db
    .updateTable('recon.callback_probes')
    .set({ reachable, detail, checked_at: checkedAt })
    .where('probe_id', '=', probeId)
    .execute();
  return { callbackBaseUrl, reachable, detail, checkedAt };
}

/** The probe's one request: whether it got a 2xx, and what happened, in a few words. */
async function post(url: string, timeoutMs: number): Promise<{ ok: boolean; detail: string }> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '',
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = (await response.text().catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 120);
    const said = `HTTP ${response.status}${text ? ` (${text})` : ''}`;
    if (response.status >= 300 && response.status < 400)
      return { ok: false, detail: `${said}: redirected to ${response.headers.get('location') ?? 'nowhere'}` };
    return { ok: response.ok, detail: said };
  } catch (error) {
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
      return { ok: false, detail: `no answer within ${timeoutMs / 1000} s` };
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const message = cause instanceof Error ? cause.message : String(cause);
    return { ok: false, detail: `cannot connect: ${code && !message.includes(code) ? `${code} ` : ''}${message}` };
  }
}

/** The latest probe that has its answer, for `recon runs` and /metrics. */
export async function latestCallbackProbe(db: Kysely<Schema>): Promise<CallbackProbeResult | undefined> {
  const row = await db
    .selectFrom('recon.callback_probes')
    .select(['callback_base_url', 'reachable', 'detail', 'checked_at'])
    .where('reachable', 'is not', null)
    .orderBy('checked_at', 'desc')
    .orderBy('probe_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    callbackBaseUrl: row.callback_base_url,
    reachable: row.reachable!,
    detail: row.detail ?? '',
    checkedAt: new Date(row.checked_at!),
  };
}

/** One line saying what a probe found, for logs and terminals. */
export function describeProbe(result: CallbackProbeResult): string {
  return result.reachable
    ? `callback base ${result.callbackBaseUrl} reaches recon's receiver`
    : `callback base ${result.callbackBaseUrl} does not reach recon's receiver: ${result.detail}; the service's exports cannot arrive (check RECON_CALLBACK_BASE_URL and what routes it to recon serve)`;
}
