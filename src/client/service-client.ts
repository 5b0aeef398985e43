import { requireService, type ServiceConfig } from '../config/config.ts';
import type { ServiceAccount } from '../config/service-accounts.ts';
import type { Logger } from '../log/logger.ts';
import { createPaymentClient, type PaymentClient, type PaymentClientOptions } from './payment-client.ts';

/** One attempt may take this long, the answer included: a few orders answer in about a second. */
const REQUEST_TIMEOUT_MS = 30_000;
/** getTransactions is a read: a dropped connection or a 5xxx the service says to retry is asked again. */
const RETRY = { attempts: 3, baseDelayMs: 500 };

/**
 * The client of the configured payment service, signing as `account` (by default the first configured); a missing
 * variable is a CONFIG error naming it.
 */
export function serviceClient(
  service: ServiceConfig,
  log?: Logger,
  observe: Pick<PaymentClientOptions, 'onAttempt'> = {},
  account?: ServiceAccount,
): PaymentClient {
  const access = requireService(service);
  const signer = account ?? access.accounts[0];
  return createPaymentClient({
    baseUrl: access.url,
    identifier: signer.identifier,
    secret: signer.secret,
    timeoutMs: REQUEST_TIMEOUT_MS,
    retry: RETRY,
    ...(log ? { log } : {}),
    ...observe,
  });
}

/** A configured account with the client that signs as it. */
export interface AccountClient {
  readonly identifier: string;
  readonly group: string | undefined;
  readonly paymentMethods: ServiceAccount['paymentMethods'];
  readonly client: PaymentClient;
}

/** Every configured account, each with its own client (its own HASH), in the configured order. */
export function accountClients(
  service: ServiceConfig,
  log?: Logger,
  observe: Pick<PaymentClientOptions, 'onAttempt'> = {},
): AccountClient[] {
  return requireService(service).accounts.map((account) => ({
    identifier: account.identifier,
    group: account.group,
    paymentMethods: account.paymentMethods,
    client: serviceClient(service, log, observe, account),
  }));
}
