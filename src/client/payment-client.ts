import type { z } from 'zod';
import { ReconError } from '../errors.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import {
  encodeRequest,
  execCodeFamily,
  getTransactionsResponseSchema,
  isRetryableExecCode,
  normalizeExecCode,
  processResponseSchema,
  PROTOCOL_VERSION,
  retry,
  signParams,
  validateRequest,
  type ExportRow,
  type GetTransactionsResponse,
  type OperationType,
  type Params,
  type PaymentMethod,
  type ProcessResponse,
  type RetryPolicy,
} from '@recon/protocol';
import { postForm } from './post-form.ts';
import type { FetchFunction } from './post-form.ts';
import type {
  AsyncExportRequest,
  AuthorizationRequest,
  CaptureOrRefundRequest,
  SyncExportRequest,
  WalletPaymentRequest,
} from './request-types.ts';
import { execCodeClass, failedAttemptOutcome, type ServiceAttempt } from './service-attempt.ts';
import { ServiceError } from './service-error.ts';
import { exportParams, toParams } from './to-params.ts';
import { TransportError } from './transport-error.ts';

export interface PaymentClientOptions {
  /** Base address of the service; the endpoints are `{baseUrl}/front/service/rest/process|export`. */
  readonly baseUrl: string;
  readonly identifier: string;
  /** The account key that signs every request (HASH). */
  readonly secret: string;
  /** Limit of each attempt, answer body included. */
  readonly timeoutMs: number;
  /** How a failed request is tried again (retriesProcess, retriesRead say which); with jitter unless it says `jitter: false`. */
  readonly retry: RetryPolicy;
  readonly fetch?: FetchFunction;
  /** Told of every attempt: the operation, its EXECCODE or failure, and how long it took; see CallOptions. */
  readonly log?: Logger;
  /** Told of every attempt too (the request latency metric); never fails a request. */
  readonly onAttempt?: (attempt: ServiceAttempt) => void;
}

/** Per call: a logger carrying the caller's ids (run, batch, request), in place of the client's own. */
export interface CallOptions {
  readonly log?: Logger;
}

/** The service's answer to an asynchronous getTransactions: the file comes later by URL or e-mail. */
export type AsyncExportReceipt = GetTransactionsResponse;

export interface PaymentClient {
  /** Wallet payment; answers EXECCODE 0002 with TRANSACTIONID and REDIRECTHTML (base64) when accepted. */
  payment(request: WalletPaymentRequest, call?: CallOptions): Promise<ProcessResponse>;
  authorization(request: AuthorizationRequest, call?: CallOptions): Promise<ProcessResponse>;
  capture(request: CaptureOrRefundRequest, call?: CallOptions): Promise<ProcessResponse>;
  refund(request: CaptureOrRefundRequest, call?: CallOptions): Promise<ProcessResponse>;
  getTransactions(request: SyncExportRequest, call?: CallOptions): Promise<ExportRow[]>;
  getTransactions(request: AsyncExportRequest, call?: CallOptions): Promise<AsyncExportReceipt>;
}

/**
 * The payment service's client. Every request is validated against the field dictionary before it is
 * sent (ProtocolError naming the field), signed, and its answer validated (PROTOCOL_RESPONSE). An EXECCODE
 * outside 0xxx is a ServiceError. Retries: see `retriesProcess` and `retriesRead`. Each attempt is logged (info with
 * its EXECCODE, warn when refused or unanswered), by name and code only: never a field of the request or its HASH.
 */
export function createPaymentClient(options: PaymentClientOptions): PaymentClient {
  const fetch = options.fetch ?? globalThis.fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  const reportAttempt = (attempt: ServiceAttempt) => {
    try {
      options.onAttempt?.(attempt);
    } catch {
      // A faulty observer must not fail a request.
    }
  };

  async function call<T extends { EXECCODE: string; MESSAGE: string }>(
    endpoint: 'process' | 'export',
    operation: OperationType,
    method: PaymentMethod | undefined,
    fields: Params,
    schema: z.ZodType<T>,
    callOptions: CallOptions = {},
  ): Promise<T> {
    const log = callOptions.log ?? options.log ?? silentLogger;
    const params = signParams(options.secret, {
      IDENTIFIER: options.identifier,
      OPERATIONTYPE: operation,
      VERSION: PROTOCOL_VERSION,
      ...fields,
    });
    validateRequest(operation, method, params);
    const url = `${base}/front/service/rest/${endpoint}`;
    const body = encodeRequest(operation, params);
    const shouldRetry = endpoint === 'export' ? retriesRead : retriesProcess;
    return retry(
      async (attempt) => {
        const started = performance.now();
        const took = () => Math.round(performance.now() - started);
        const report = (outcome: string, execCode?: string) =>
          reportAttempt({
            operation,
            outcome,
            ...(execCode === undefined ? {} : { execCode }),
            seconds: (performance.now() - started) / 1000,
          });
        let answer: T;
        try {
          answer = parseAnswer(operation, schema, await postForm(fetch, url, body, options.timeoutMs));
        } catch (error) {
          report(failedAttemptOutcome(error));
          log.warn({ operation, try: attempt, ms: took(), err: error }, `${operation}: no valid answer`);
          throw error;
        }
        const execCode = answer.EXECCODE;
        report(execCodeClass(normalizeExecCode(execCode)), normalizeExecCode(execCode));
        if (execCodeFamily(execCode) !== 'success') {
          log.warn(
            { operation, try: attempt, execCode, ms: took(), serviceMessage: answer.MESSAGE },
            `${operation} answered EXECCODE ${execCode}`,
          );
          throw new ServiceError(operation, execCode, answer.MESSAGE);
        }
        log.info({ operation, try: attempt, execCode, ms: took() }, `${operation} answered EXECCODE ${execCode}`);
        return answer;
      },
      { jitter: true, ...options.retry },
      { shouldRetry },
    );
  }

  const process = (
    operation: OperationType,
    method: PaymentMethod | undefined,
    fields: Params,
    callOptions?: CallOptions,
  ) => call('process', operation, method, fields, processResponseSchema, callOptions);

  async function getTransactions(request: SyncExportRequest | AsyncExportRequest, callOptions?: CallOptions) {
    const answer = await call(
      'export',
      'getTransactions',
      undefined,
      exportParams(request),
      getTransactionsResponseSchema,
      callOptions,
    );
    if (request.CALLBACKURL !== undefined || request.MAILTO !== undefined) return answer;
    if (answer.DATA === undefined) throw new ReconError('PROTOCOL_RESPONSE', 'getTransactions answer: missing DATA');
    return answer.DATA;
  }

  return {
    payment: (request, callOptions) => process('payment', 'wallet', toParams(request), callOptions),
    authorization: ({ method, ...request }, callOptions) =>
      process('authorization', method, toParams(request), callOptions),
    capture: (request, callOptions) => process('capture', undefined, toParams(request), callOptions),
    refund: (request, callOptions) => process('refund', undefined, toParams(request), callOptions),
    getTransactions: getTransactions as PaymentClient['getTransactions'],
  };
}

/**
 * A payment operation is repeated only when it cannot have reached the service (connection refused) or
 * the service said to retry. Never after a timeout or a dropped connection: a second capture or refund
 * could move money twice. Never on 5004: the result comes by notification.
 */
export function retriesProcess(error: unknown): boolean {
  if (error instanceof TransportError) return error.neverSent;
  return error instanceof ServiceError && isRetryableExecCode(error.execCode);
}

/** getTransactions is a read: any transport failure or a retryable EXECCODE may be tried again. */
export function retriesRead(error: unknown): boolean {
  if (error instanceof TransportError) return true;
  return error instanceof ServiceError && isRetryableExecCode(error.execCode);
}

function parseAnswer<T>(operation: string, schema: z.ZodType<T>, json: unknown): T {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
  throw new ReconError('PROTOCOL_RESPONSE', `${operation} answer: invalid ${field}: ${issue.message}`);
}
