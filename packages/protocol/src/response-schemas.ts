import { z } from 'zod';
import { fieldSchema } from './field-schema.ts';

/**
 * Responses of both endpoints: JSON objects with the spec's field names, HTTP 200 also for EXECCODE errors.
 * Loose objects: a field the spec does not name is kept, not refused, since the service may add some.
 */
const envelope = {
  EXECCODE: fieldSchema('EXECCODE'),
  MESSAGE: z.string(),
};

export const processResponseSchema = z
  .looseObject({
    ...envelope,
    OPERATIONTYPE: z.enum(['payment', 'authorization', 'capture', 'refund']),
    DESCRIPTOR: z.string().optional(),
    TRANSACTIONID: fieldSchema('TRANSACTIONID').optional(),
    REDIRECTHTML: fieldSchema('REDIRECTHTML').optional(),
  })
  .superRefine((response, context) => {
    const needs = (field: 'TRANSACTIONID' | 'REDIRECTHTML') => {
      if (response[field] === undefined) {
        context.addIssue({ code: 'custom', path: [field], message: `missing with EXECCODE ${response.EXECCODE}` });
      }
    };
    if (response.EXECCODE === '0000' || response.EXECCODE === '0002') needs('TRANSACTIONID');
    if (response.EXECCODE === '0002') needs('REDIRECTHTML');
  });

export type ProcessResponse = z.infer<typeof processResponseSchema>;

/** One exported transaction: every value a string, keyed by the requested columns. */
export const exportRowSchema = z.record(z.string(), z.string());
export type ExportRow = z.infer<typeof exportRowSchema>;

export const getTransactionsResponseSchema = z.looseObject({
  ...envelope,
  OPERATIONTYPE: z.literal('getTransactions'),
  DATA: z.array(exportRowSchema).optional(),
});

export type GetTransactionsResponse = z.infer<typeof getTransactionsResponseSchema>;
