import { decodeRequest, inferPaymentMethod, invalidParameter, ProtocolError, validateRequest } from '@recon/protocol';
import { authenticateRequest } from '../authenticate-request.ts';
import type { SandboxContext } from '../sandbox-context.ts';
import { capture } from './capture.ts';
import { ProcessRefusal, type ProcessAnswer } from './process-answer.ts';
import { refund } from './refund.ts';
import { redirectHtmlFor, startRedirect } from './start-redirect.ts';

const PROCESS_OPERATIONS = ['payment', 'authorization', 'capture', 'refund'] as const;
type ProcessOperation = (typeof PROCESS_OPERATIONS)[number];

/**
 * POST /front/service/rest/process: decodes, authenticates (IDENTIFIER, then HASH, so nothing is revealed
 * to a caller without the secret), validates against the field dictionary, then applies the operation.
 * Every outcome, refusals included, is an answer object; only a sandbox bug throws.
 */
export function handleProcessRequest(ctx: SandboxContext, body: string, baseUrl: string): ProcessAnswer {
  let operationType = new URLSearchParams(body).get('method') ?? '';
  const answer = (execCode: string, message: string, extra: Partial<ProcessAnswer> = {}): ProcessAnswer => ({
    OPERATIONTYPE: operationType,
    EXECCODE: execCode,
    MESSAGE: message,
    DESCRIPTOR: ctx.descriptor,
    ...extra,
  });
  try {
    const decoded = decodeRequest(body);
    operationType = decoded.method;
    const params = decoded.params;
    const account = authenticateRequest(ctx.accounts, params);
    const operation = processOperation(decoded.method);
    validateRequest(operation, undefined, params);
    if (operation === 'capture' || operation === 'refund') {
      const transaction = operation === 'capture' ? capture(ctx, account, params) : refund(ctx, account, params);
      return answer(transaction.execCode, transaction.message, { TRANSACTIONID: transaction.transactionId });
    }
    const transaction = startRedirect(ctx, account, operation, inferPaymentMethod(params), params);
    return answer(transaction.execCode, transaction.message, {
      TRANSACTIONID: transaction.transactionId,
      REDIRECTHTML: redirectHtmlFor(transaction, baseUrl),
    });
  } catch (error) {
    if (error instanceof ProtocolError || error instanceof ProcessRefusal) return answer(error.execCode, error.message);
    throw error;
  }
}

function processOperation(method: string): ProcessOperation {
  if ((PROCESS_OPERATIONS as readonly string[]).includes(method)) return method as ProcessOperation;
  const why =
    method === 'getTransactions'
      ? 'getTransactions is served by the export endpoint'
      : `expected one of ${PROCESS_OPERATIONS.join(', ')}`;
  throw invalidParameter('OPERATIONTYPE', `${JSON.stringify(method)}: ${why}`);
}
