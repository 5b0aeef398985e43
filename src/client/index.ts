/** The payment service's client, in one import. */
export { createPaymentClient, retriesProcess, retriesRead } from './payment-client.ts';
export type { AsyncExportReceipt, CallOptions, PaymentClient, PaymentClientOptions } from './payment-client.ts';
export type {
  AsyncExportRequest,
  AuthorizationRequest,
  CaptureOrRefundRequest,
  CartItemInput,
  ExportOptions,
  InstalmentAuthorizationRequest,
  SyncExportRequest,
  TransactionSelection,
  WalletPaymentRequest,
} from './request-types.ts';
export { ServiceError } from './service-error.ts';
export { TransportError } from './transport-error.ts';
export type { FetchFunction } from './post-form.ts';
