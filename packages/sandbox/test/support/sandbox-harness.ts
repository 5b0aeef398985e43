import { encodeRequest, signParams, type CartItem, type Params } from '@recon/protocol';
import { createSandboxClock } from '../../src/clock.ts';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox.ts';

export const IDENTIFIER = 'ACME-SHOP';
export const SECRET = 'sandbox-account-key';
export const START = new Date('2026-03-02T09:00:00.000Z');

export interface Harness {
  readonly sandbox: Sandbox;
  readonly baseUrl: string;
  /** POSTs a process request signed with the account secret (or `options.secret`); OPERATIONTYPE is `method` unless given. */
  process(method: string, params: Params, options?: { secret?: string }): Promise<Answer>;
  /** POSTs a raw body to the process endpoint. */
  processRaw(body: string): Promise<Answer>;
  /** Starts a payment or authorization and answers the cardholder page; returns the TRANSACTIONID. */
  settle(method: 'payment' | 'authorization', params: Params, outcome: string): Promise<string>;
  cardholder(transactionId: string, outcome: string): Promise<{ status: number; html: string }>;
  /** The cardholder page's URL, read from the decoded REDIRECTHTML's form action. */
  pageUrl(answer: Answer): string;
  close(): Promise<void>;
}

export type Answer = Record<string, string>;

let orders = 0;
export function nextOrderId(): string {
  orders += 1;
  return `ORDER-${process.pid}-${orders}`;
}

export function walletParams(overrides: Params = {}): Params {
  return {
    IDENTIFIER,
    ORDERID: nextOrderId(),
    AMOUNT: '4990',
    CLIENTIDENT: 'client-42',
    CLIENTEMAIL: 'jane.doe@example.com',
    CLIENTUSERAGENT: 'Mozilla/5.0',
    CLIENTIP: '203.0.113.7',
    DESCRIPTION: 'Order of two books',
    VERSION: '3.0',
    ...overrides,
  };
}

export const CART: readonly CartItem[] = [
  {
    MERCHANTITEMID: 'SKU-1',
    NAME: 'Sofa',
    PRICE: '120000',
    QUANTITY: '1',
    CATEGORY: 'furniture',
    DELIVERYEXPECTEDDELAY: '3',
  },
  { MERCHANTITEMID: 'SKU-2', NAME: 'Cushion', PRICE: '2500', QUANTITY: '2', CATEGORY: 'homeandgarden' },
];

export function instalmentParams(overrides: Params = {}): Params {
  return walletParams({
    AMOUNT: '125000',
    PAYMENTOPTION: 'instalpay-3x',
    BILLINGFIRSTNAME: 'Jane',
    BILLINGLASTNAME: 'Doe',
    BILLINGCOUNTRY: 'FR',
    SHIPTOCITY: 'Lyon',
    CART,
    ...overrides,
  });
}

/** The form body of a signed request, as a merchant's system sends it; OPERATIONTYPE defaults to `method`. */
export function signedBody(method: string, params: Params, secret = SECRET): string {
  return encodeRequest(method, signParams(secret, { OPERATIONTYPE: method, ...params }));
}

export type Endpoint = 'process' | 'export';

/** POSTs a raw body to `{baseUrl}/front/service/rest/{endpoint}` and returns the JSON answer. */
export async function postBody(baseUrl: string, endpoint: Endpoint, body: string): Promise<Answer> {
  const response = await fetch(`${baseUrl}/front/service/rest/${endpoint}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  if (response.status !== 200) throw new Error(`${endpoint} answered HTTP ${response.status}`);
  return (await response.json()) as Answer;
}

/** POSTs a signed request, by default to the endpoint that serves `method`, and returns the JSON answer. */
export function postSigned(
  baseUrl: string,
  method: string,
  params: Params,
  secret = SECRET,
  endpoint: Endpoint = method === 'getTransactions' ? 'export' : 'process',
): Promise<Answer> {
  return postBody(baseUrl, endpoint, signedBody(method, params, secret));
}

/** The cardholder page's URL, read from the decoded REDIRECTHTML's form action. */
export function cardholderPageUrl(answer: Answer): string {
  const html = Buffer.from(answer['REDIRECTHTML'] ?? '', 'base64').toString('utf8');
  const action = /<form[^>]*\saction="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form action in REDIRECTHTML: ${html}`);
  return action.replaceAll('&amp;', '&');
}

/** The cardholder's answer on the page: a form POST of `outcome`. */
export async function answerCardholderPage(url: string, outcome: string): Promise<{ status: number; html: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ outcome }).toString(),
  });
  return { status: response.status, html: await response.text() };
}

export async function startHarness(options: Partial<SandboxOptions> = {}): Promise<Harness> {
  const sandbox = createSandbox({
    identifier: IDENTIFIER,
    secret: SECRET,
    clock: createSandboxClock({ start: START, ticking: false }),
    notificationRetry: { attempts: 6, baseDelayMs: 10, maxDelayMs: 50 },
    ...options,
  });
  const baseUrl = await sandbox.listen(0, '127.0.0.1');

  const postProcess = (method: string, params: Params, options: { secret?: string } = {}) =>
    postSigned(baseUrl, method, params, options.secret, 'process');

  const pages = new Map<string, string>();
  return {
    sandbox,
    baseUrl,
    process: postProcess,
    processRaw: (body) => postBody(baseUrl, 'process', body),
    pageUrl: cardholderPageUrl,
    async settle(method, params, outcome) {
      const answer = await postProcess(method, params);
      if (answer['EXECCODE'] !== '0002') throw new Error(`expected 0002, got ${JSON.stringify(answer)}`);
      const url = cardholderPageUrl(answer);
      pages.set(answer['TRANSACTIONID']!, url);
      const page = await answerCardholderPage(url, outcome);
      if (page.status !== 200) throw new Error(`cardholder page answered ${page.status}: ${page.html}`);
      return answer['TRANSACTIONID']!;
    },
    cardholder(transactionId, outcome) {
      return answerCardholderPage(
        pages.get(transactionId) ?? `${baseUrl}/sandbox/cardholder/${transactionId}`,
        outcome,
      );
    },
    close: () => sandbox.close(),
  };
}

/** The params of a capture or refund of `transactionId`, for the order it belongs to. */
export function referenceParams(harness: Harness, transactionId: string, overrides: Params = {}): Params {
  const transaction = harness.sandbox.store.get(transactionId);
  return {
    IDENTIFIER,
    TRANSACTIONID: transactionId,
    ORDERID: transaction?.orderId ?? 'UNKNOWN-ORDER',
    DESCRIPTION: 'Back office operation',
    VERSION: '3.0',
    ...overrides,
  };
}
