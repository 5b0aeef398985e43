/** Where the cardholder finishes a payment or authorization: one page per transaction, under the base URL. */
export const CARDHOLDER_PATH_PREFIX = '/sandbox/cardholder/';

export function cardholderUrl(baseUrl: string, transactionId: string): string {
  return `${baseUrl}${CARDHOLDER_PATH_PREFIX}${encodeURIComponent(transactionId)}`;
}
