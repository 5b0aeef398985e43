/** The zod schemas derived from the field dictionary, in one import. */
export { cartFieldSchema, cartItemSchema, fieldSchema, formatSchema, idListSchema } from './field-schema.ts';
export { requestSchema } from './request-schemas.ts';
export { exportRowSchema, getTransactionsResponseSchema, processResponseSchema } from './response-schemas.ts';
export type { ExportRow, GetTransactionsResponse, ProcessResponse } from './response-schemas.ts';
export { notificationSchemas, parseNotification } from './notification-schemas.ts';
