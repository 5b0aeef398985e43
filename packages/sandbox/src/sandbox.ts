import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBoundedServer, decodeNotification, encodeNotification, listen, type RetryPolicy } from '@recon/protocol';
import { answerCardholderPage, showCardholderPage } from './cardholder/cardholder-routes.ts';
import {
  finishCardholderStep,
  type CardholderOutcome,
  type CardholderStepResult,
} from './cardholder/finish-cardholder-step.ts';
import { createSandboxClock, type SandboxClock } from './clock.ts';
import { createCallbackDispatch, type CallbackFormat } from './export/callback-switches.ts';
import { createExportDeliveries } from './export/export-deliveries.ts';
import { handleExportRequest, type GetTransactionsContext } from './export/get-transactions.ts';
import { createRequestHandler } from './http/sandbox-request-handler.ts';
import {
  createNotificationOutbox,
  type NotificationDelivery,
  type OutboxEvent,
} from './notifications/notification-outbox.ts';
import { notifyOperation } from './notifications/notify-operation.ts';
import { neverThrowing } from './never-throwing.ts';
import { handleProcessRequest } from './process/handle-process-request.ts';
import { seedScenario, type ScenarioSummary } from './scenario/seed-scenario.ts';
import type { ProcessAnswer } from './process/process-answer.ts';
import { createSandboxAccounts, type SandboxAccount, type SandboxAccounts } from './sandbox-accounts.ts';
import type { SandboxContext } from './sandbox-context.ts';
import { createSandboxStore, type SandboxStore } from './store.ts';
import { expireOverdueApprovals } from './time-rules.ts';

export interface SandboxOptions {
  /**
   * The merchant accounts served, each with its IDENTIFIER, its secret (the HASH key of its requests and of its
   * transactions' notifications), an optional group (exported together with SCOPE=CLIENTSGROUP) and the payment
   * methods it is enabled for (both when absent). Or a single account given as `identifier` and `secret`.
   */
  readonly accounts?: readonly SandboxAccount[];
  readonly identifier?: string;
  readonly secret?: string;
  /** The merchant's notification URL; without it notifications are recorded, not sent. */
  readonly notifyUrl?: string;
  /** SMTP server for MAILTO exports. */
  readonly smtp?: { readonly host: string; readonly port: number };
  /** Default: a clock running with real time from now. */
  readonly clock?: SandboxClock;
  /**
   * Fills the store at creation with the deterministic scenario of this seed (orders of both methods, every outcome),
   * and notifies its operations as the service would have, to `notifyUrl` when set.
   */
  readonly seed?: number;
  /** Orders in the seeded scenario; the seeder's default when absent. */
  readonly seedOrders?: number;
  /** Path the routes live under, '' (default) or like '/payment'. */
  readonly basePath?: string;
  /** DESCRIPTOR of every answer and notification. */
  readonly descriptor?: string;
  readonly notificationRetry?: Partial<RetryPolicy>;
  readonly exportRetry?: Partial<RetryPolicy>;
  /** How a CALLBACKURL export is POSTed: `multipart` (default, the file in part `file`) or `raw` (the bytes as the body). */
  readonly callbackFormat?: CallbackFormat;
  /** The first N CALLBACKURL deliveries of this sandbox are lost: never sent, though answered 0000. Default 0. */
  readonly dropCallbacks?: number;
  /** Every CALLBACKURL delivery is sent twice (same bytes, same URL), the second after the first ended. */
  readonly duplicateCallbacks?: boolean;
  /**
   * Transactions created less than this many seconds ago by the sandbox clock are left out of every export
   * (synchronous, CALLBACKURL, MAILTO): the service's exports trail its live data. Default 0.
   */
  readonly exportLagSeconds?: number;
  /** Background happenings (notification deliveries, failed exports, internal errors); never thrown. */
  readonly onEvent?: (event: SandboxEvent) => void;
}

export type SandboxEvent =
  | { readonly type: 'notification'; readonly event: OutboxEvent }
  | { readonly type: 'export-failed'; readonly label: string; readonly error: unknown }
  | { readonly type: 'export-dropped'; readonly label: string }
  | { readonly type: 'internal-error'; readonly error: unknown };

export interface Sandbox {
  /** Starts serving; resolves to the base URL (`http://host:port` + basePath). Port 0 picks a free port. */
  listen(port?: number, host?: string): Promise<string>;
  /** The base URL once listening. */
  readonly baseUrl: string | undefined;
  /** Stops serving and abandons pending notification retries and export deliveries. */
  close(): Promise<void>;
  readonly clock: SandboxClock;
  readonly store: SandboxStore;
  /** The accounts served, as given (one for `identifier` and `secret`). */
  readonly accounts: readonly SandboxAccount[];
  /** What the seeder created, when `seed` was given. */
  readonly scenario: ScenarioSummary | undefined;
  readonly notifications: {
    /** Every notification so far (signed fields, state, attempts). */
    deliveries(): NotificationDelivery[];
    /** Resolves when no notification is being delivered or retried. */
    idle(): Promise<void>;
  };
  /** Resolves when no CALLBACKURL or MAILTO export is in flight. */
  readonly exports: { idle(): Promise<void> };
  /** In process, without HTTP: a process request body as the endpoint takes it, and its answer. */
  process(body: string): ProcessAnswer;
  getTransactions(body: string): Promise<Record<string, unknown>>;
  /** In process: the cardholder's answer on the method's page (or the update of a pending approval). */
  finishCardholderStep(transactionId: string, outcome: CardholderOutcome): CardholderStepResult;
}

const DEFAULT_DESCRIPTOR = 'RECON SANDBOX';

export function createSandbox(options: SandboxOptions): Sandbox {
  const accounts = accountsOf(options);
  const basePath = normalizeBasePath(options.basePath ?? '');
  const clock = options.clock ?? createSandboxClock();
  const store = createSandboxStore();
  const emit = neverThrowing(options.onEvent);
  const outbox = createNotificationOutbox({
    ...(options.notificationRetry ? { retry: options.notificationRetry } : {}),
    url: options.notifyUrl,
    // Each notification is signed with the secret of the account its transaction was made on.
    encode: (fields) => {
      const body = encodeNotification(fields, accounts.find(fields['IDENTIFIER'] ?? '')!.secret);
      return { body, fields: decodeNotification(body) };
    },
    onEvent: (event) => emit({ type: 'notification', event }),
  });
  const exportDeliveries = createExportDeliveries({
    ...(options.exportRetry ? { retry: options.exportRetry } : {}),
    onError: (error, label) => emit({ type: 'export-failed', label, error }),
  });
  const callbacks = createCallbackDispatch({
    ...(options.callbackFormat ? { format: options.callbackFormat } : {}),
    ...(options.dropCallbacks === undefined ? {} : { dropFirst: options.dropCallbacks }),
    ...(options.duplicateCallbacks === undefined ? {} : { duplicate: options.duplicateCallbacks }),
  });
  const exportLagSeconds = options.exportLagSeconds ?? 0;
  if (!Number.isFinite(exportLagSeconds) || exportLagSeconds < 0) {
    throw new RangeError(`exportLagSeconds is a number of seconds, 0 or more (got ${exportLagSeconds})`);
  }
  let externalReferences = 0;
  const ctx: SandboxContext = {
    accounts,
    descriptor: options.descriptor ?? DEFAULT_DESCRIPTOR,
    store,
    clock,
    outbox,
    nextExternalReference: () => String(++externalReferences).padStart(9, '0'),
  };
  const scenario =
    options.seed === undefined
      ? undefined
      : seedScenario(
          {
            store,
            clock,
            accounts,
            notify: (transaction) => notifyOperation(ctx, transaction),
          },
          { seed: options.seed, ...(options.seedOrders === undefined ? {} : { orders: options.seedOrders }) },
        );
  const stopExpiring = clock.onAdvance((now) => expireOverdueApprovals(store, now));

  let server: Server | undefined;
  let baseUrl: string | undefined;
  const inProcessBaseUrl = () => baseUrl ?? `http://sandbox.invalid${basePath}`;

  const exportContext: GetTransactionsContext = {
    store,
    clock,
    accounts,
    deliveries: exportDeliveries,
    ...(options.smtp ? { smtp: options.smtp } : {}),
    callbacks,
    onCallbackLost: (label) => emit({ type: 'export-dropped', label }),
    exportLagMs: exportLagSeconds * 1000,
  };

  const handler = createRequestHandler(
    {
      process: (body, requestBaseUrl) => handleProcessRequest(ctx, body, requestBaseUrl),
      export: (body) => handleExportRequest(exportContext, body),
      cardholderPage: (transactionId) => showCardholderPage(ctx, transactionId),
      cardholderAnswer: (transactionId, form) => answerCardholderPage(ctx, transactionId, form),
      clockNow: () => clock.now(),
      advanceClockDays: (days) => {
        clock.advanceDays(days);
        return clock.now();
      },
    },
    { basePath, fallbackBaseUrl: inProcessBaseUrl, onError: (error) => emit({ type: 'internal-error', error }) },
  );

  return {
    async listen(port = 0, host = '127.0.0.1') {
      if (server) throw new Error('the sandbox is already listening');
      const listening = createBoundedServer(handler);
      await listen(listening, port, host);
      server = listening;
      const address = listening.address() as AddressInfo;
      const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      baseUrl = `http://${hostPart}:${address.port}${basePath}`;
      return baseUrl;
    },
    get baseUrl() {
      return baseUrl;
    },
    async close() {
      stopExpiring();
      outbox.close();
      await exportDeliveries.close();
      const closing = server;
      server = undefined;
      if (!closing) return;
      await new Promise<void>((resolve) => {
        closing.close(() => resolve());
        closing.closeAllConnections();
      });
    },
    clock,
    store,
    accounts: accounts.list,
    scenario,
    notifications: { deliveries: () => outbox.deliveries(), idle: () => outbox.idle() },
    exports: { idle: () => exportDeliveries.idle() },
    process: (body) => handleProcessRequest(ctx, body, inProcessBaseUrl()),
    getTransactions: (body) => handleExportRequest(exportContext, body),
    finishCardholderStep: (transactionId, outcome) => finishCardholderStep(ctx, transactionId, outcome),
  };
}

function accountsOf(options: SandboxOptions): SandboxAccounts {
  const { accounts, identifier, secret } = options;
  if (accounts !== undefined) {
    if (identifier !== undefined || secret !== undefined) {
      throw new TypeError('give the sandbox accounts, or one account as identifier and secret: not both');
    }
    return createSandboxAccounts(accounts);
  }
  if (identifier === undefined || secret === undefined) {
    throw new TypeError('the sandbox needs accounts, or one account as identifier and secret');
  }
  return createSandboxAccounts([{ identifier, secret }]);
}

/** '' or '/a/b' without a trailing slash, so routes can be appended. */
function normalizeBasePath(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}
