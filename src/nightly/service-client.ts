import { createPaymentClient, type PaymentClient } from '../client/payment-client.ts';
import type { ServiceConfig } from '../config/config.ts';
import { ReconError } from '../errors.ts';

/** Each attempt's limit, and the attempts: the export endpoint answers at once (the file comes later). */
const REQUEST_TIMEOUT_MS = 30_000;
const RETRY = { attempts: 3, baseDelayMs: 1_000 };

/** The client of the configured payment service; a missing variable is a CONFIG error naming it. */
export function serviceClient(service: ServiceConfig): PaymentClient {
  const missing = [
    ['RECON_SERVICE_URL', service.url],
    ['RECON_IDENTIFIER', service.identifier],
    ['RECON_SECRET', service.secret],
  ].filter(([, value]) => value === undefined).map(([name]) => name);
  if (missing.length > 0) throw new ReconError('CONFIG', `set ${missing.join(', ')} (the payment service recon asks for exports)`);
  return createPaymentClient({
    baseUrl: service.url!,
    identifier: service.identifier!,
    secret: service.secret!,
    timeoutMs: REQUEST_TIMEOUT_MS,
    retry: RETRY,
  });
}
