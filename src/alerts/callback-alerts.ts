import { dateInZone } from '@recon/protocol';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { Quote } from './nightly-alert-text.ts';
import type { NewAlert } from './new-alert.ts';

/** A probe's news is fresh for a day: an older failure was either alerted on then or is no longer the state. */
const PROBE_NEWS_MS = 24 * 3_600_000;

/**
 * One alert per callback base and day (in `timezone`) for which a probe (src/nightly/callback-probe.ts, at serve's
 * start and before each nightly run's requests) found that the base does not reach recon's receiver: the service's
 * exports cannot arrive. Later failing probes of that day are the same alert.
 */
export async function findCallbackAlerts(
  db: Kysely<Schema>,
  timezone: string,
  now: Date,
  quote: Quote,
): Promise<NewAlert[]> {
  const probes = await db
    .selectFrom('recon.callback_probes')
    .select(['callback_base_url', 'reason', 'nightly_run_id', 'detail', 'checked_at'])
    .where('reachable', '=', false)
    .where('checked_at', '>=', new Date(now.getTime() - PROBE_NEWS_MS))
    .orderBy('probe_id')
    .execute();
  if (probes.length === 0) return [];
  const raised = new Set(
    (await db.selectFrom('recon.alerts').select('key').where('cause', '=', 'callback_unreachable').execute()).map(
      (row) => row.key,
    ),
  );
  const alerts = new Map<string, NewAlert>();
  for (const probe of probes) {
    const base = probe.callback_base_url;
    const key = `${base} ${dateInZone(new Date(probe.checked_at!), timezone)}`;
    if (raised.has(key) || alerts.has(key)) continue;
    // What answered (an error's message, a status line, a Location header) is whoever's is at the base: quoted.
    const detail = quote(probe.detail ?? 'no answer recorded');
    const when = probe.nightly_run_id === null ? 'at recon serve start' : `for nightly run ${probe.nightly_run_id}`;
    alerts.set(key, {
      cause: 'callback_unreachable',
      key,
      title: `recon: the callback base ${base} does not reach recon`,
      text:
        `recon: the callback base ${base} does not reach recon's receiver (probed ${when}): ${detail}. ` +
        "The service's exports cannot arrive: check RECON_CALLBACK_BASE_URL and what routes it to recon serve.",
      detail,
      ...(probe.nightly_run_id === null ? {} : { nightlyRunId: String(probe.nightly_run_id) }),
      fields: { callbackBaseUrl: base, probedAt: new Date(probe.checked_at!).toISOString(), probeReason: probe.reason },
    });
  }
  return [...alerts.values()];
}
