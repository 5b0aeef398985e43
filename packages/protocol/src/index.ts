/** The payment service protocol (payment-api-3.0.md), pure and shared by the client, the sandbox and the receiver. */
export * from './form-encoding.ts';
export * from './hash.ts';
export * from './notification-encoding.ts';
export * from './field-dictionary.ts';
export * from './field-format.ts';
export * from './field-schema.ts';
export * from './operation-fields.ts';
export * from './request-schemas.ts';
export * from './validate-request.ts';
export * from './response-schemas.ts';
export * from './notification-schemas.ts';
export * from './protocol-error.ts';
export * from './exec-codes.ts';
export * from './export-columns.ts';
export * from './iso-3166.ts';
export * from './iso-4217.ts';
export * from './bounded-http-server.ts';
