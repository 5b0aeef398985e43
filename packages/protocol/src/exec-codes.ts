/** Execution codes (EXECCODE) as service-facts.md lists them, grouped by family (the first digit). */
export type ExecCodeFamily =
  | 'success' // 0xxx: success or pending
  | 'bad-request' // 1xxx
  | 'bad-reference' // 2xxx: bad use of a transaction or alias reference
  | 'account' // 3xxx
  | 'refused' // 4xxx: refused by the bank or supplier
  | 'system' // 5xxx
  | 'anti-fraud'; // 6xxx

const FAMILY_BY_DIGIT: Readonly<Record<string, ExecCodeFamily>> = {
  '0': 'success',
  '1': 'bad-request',
  '2': 'bad-reference',
  '3': 'account',
  '4': 'refused',
  '5': 'system',
  '6': 'anti-fraud',
};

export const EXEC_CODES = {
  '0000': 'operation succeeded',
  '0001': '3-D Secure authentication required',
  '0002': 'redirect the cardholder: display the decoded REDIRECTHTML',
  '0003': 'waiting for approval (expires after 6 days without update)',
  '0004': 'partially accepted',
  '1001': 'missing parameter',
  '1002': 'invalid parameter',
  '1003': 'HASH error',
  '1004': 'unsupported protocol version',
  '1005': 'bad request',
  '1007': 'cart total differs from the amount',
  '2001': 'alias not found',
  '2002': 'reference not found',
  '2003': 'reference not succeeded',
  '2004': 'reference not refundable',
  '2005': 'authorization not capturable',
  '2007': 'invalid capture amount',
  '2008': 'invalid refund amount',
  '2009': 'authorization expired',
  '2016': 'reference already exists',
  '2017': 'not available yet, retry later',
  '3001': 'account disabled',
  '3002': 'unauthorized server IP address',
  '3004': 'rate limit reached',
  '4001': 'refused by the bank',
  '4002': 'insufficient funds',
  '4003': 'card refused',
  '4004': 'aborted',
  '4015': 'expired',
  '5001': 'protocol error',
  '5002': 'network error',
  '5003': 'maintenance',
  '5004': 'timeout: the result comes by notification',
  // Named by service-facts.md only in its retry rule.
  '5005': 'system error, retry later',
  '6001': 'refused by the merchant anti-fraud rules',
} as const;

export type ExecCode = keyof typeof EXEC_CODES;

const RETRYABLE: ReadonlySet<string> = new Set(['5001', '5002', '5003', '5005']);

export function isKnownExecCode(code: string): code is ExecCode {
  return Object.hasOwn(EXEC_CODES, code);
}

/** Export rows write EXECCODE without leading zeros (`0`); everything else uses the 4-digit form. */
export function normalizeExecCode(code: string): string {
  return /^[0-9]{1,4}$/.test(code) ? code.padStart(4, '0') : code;
}

export function execCodeFamily(code: string): ExecCodeFamily | undefined {
  const normalized = normalizeExecCode(code);
  return /^[0-9]{4}$/.test(normalized) ? FAMILY_BY_DIGIT[normalized[0]!] : undefined;
}

/** Only these may be retried (later); 5004 never: its result arrives by notification. */
export function isRetryableExecCode(code: string): boolean {
  return RETRYABLE.has(normalizeExecCode(code));
}

export function describeExecCode(code: string): string {
  const normalized = normalizeExecCode(code);
  return isKnownExecCode(normalized)
    ? EXEC_CODES[normalized]
    : `unlisted ${execCodeFamily(normalized) ?? 'unknown'} code`;
}
