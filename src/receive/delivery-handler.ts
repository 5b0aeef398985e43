import type { IncomingMessage, ServerResponse } from 'node:http';
import { GateBusyError } from './concurrency-gate.ts';
import { TOKEN_PATTERN } from './export-token.ts';
import type { ReceiverContext } from './receiver-context.ts';
import { ClientGoneError, Refusal } from './refusal.ts';
import { mediaType } from './request-body.ts';
import { answer, answerEarly } from './respond.ts';
import { SlowClientError } from './slow-client-guard.ts';
import { spoolUpload, type SpooledUpload } from './spool-upload.ts';
import { receiveProbe } from './probe-receipt.ts';
import { checkDeliveryToken, storeDelivery, type StoredDelivery } from './store-delivery.ts';

/** How long a sender turned away for lack of a free slot is asked to wait before it sends again. */
const RETRY_AFTER_SECONDS = '30';

/**
 * POST <callback path><token>: the token is checked, the body spooled to a temp file, and the delivery stored in
 * one short transaction (store-delivery.ts) before it is answered 200, then handed to onDelivered. A failing
 * onDelivered changes nothing for the sender: the delivery stays in state 'received', where a worker's sweep
 * finds it again. Whatever the sender does, its failure is this request's answer, never the process's.
 */
export async function handleDelivery(
  ctx: ReceiverContext,
  request: IncomingMessage,
  response: ServerResponse,
  token: string,
): Promise<void> {
  const refuse = (refusal: Refusal) => {
    ctx.metrics.deliveriesRefused.inc({ reason: refusal.reason });
    ctx.emit({
      type: 'delivery-refused',
      status: refusal.status,
      reason: refusal.reason,
      message: refusal.message,
      tokenPrefix: tokenPrefix(token),
    });
    answerEarly(request, response, refusal.status, refusal.message);
  };
  if (!TOKEN_PATTERN.test(token)) return refuse(new Refusal(404, 'unknown_token', 'unknown token'));
  // A raw body announces its size: refuse it before reading any of it.
  const declared = Number(request.headers['content-length']);
  if (mediaType(request.headers['content-type']) !== 'multipart/form-data' && declared > ctx.spool.maxBytes) {
    return refuse(new Refusal(413, 'too_large', `body over RECON_MAX_FILE_BYTES (${ctx.spool.maxBytes} bytes)`));
  }
  const slot = ctx.uploads.tryEnter();
  if (!slot) return busy(ctx, request, response, token, new GateBusyError('uploads'));

  let stored: StoredDelivery;
  let spooled: SpooledUpload | undefined;
  try {
    const { requestId } = await ctx.deliveryQueries.run(() => checkDeliveryToken(ctx.db, token, ctx.now()));
    ctx.emit({ type: 'delivery-receiving', requestId });
    spooled = await spoolUpload(request, ctx.spool);
    const upload = spooled;
    stored = await ctx.deliveryQueries.run(() => storeDelivery(ctx.db, token, upload, { now: ctx.now }));
  } catch (error) {
    if (error instanceof Refusal && error.reason === 'unknown_token' && (await isProbe(ctx, token))) {
      ctx.emit({ type: 'probe-received' });
      return answerEarly(request, response, 200, 'probe received');
    }
    if (error instanceof Refusal) return refuse(error);
    if (error instanceof GateBusyError) return busy(ctx, request, response, token, error);
    if (error instanceof ClientGoneError || error instanceof SlowClientError) {
      const reason = error instanceof SlowClientError ? 'slow' : 'aborted';
      ctx.metrics.deliveriesRefused.inc({ reason });
      ctx.emit({
        type: 'delivery-refused',
        status: null,
        reason,
        message: error.message,
        tokenPrefix: tokenPrefix(token),
      });
      return;
    }
    ctx.metrics.deliveriesRefused.inc({ reason: 'error' });
    ctx.emit({ type: 'internal-error', path: request.url ?? '', error });
    // The sender may try again: nothing was stored.
    return answerEarly(request, response, 500, 'the delivery could not be stored, try again later');
  } finally {
    slot();
    await spooled?.remove();
  }

  ctx.metrics.deliveriesAccepted.inc({ outcome: stored.outcome });
  ctx.emit({ type: 'delivery-accepted', ...stored });
  answer(response, 200, 'OK');
  if (stored.outcome === 'repeated') return;
  ctx.metrics.deliveredBytes.inc(stored.bytes);
  ctx.metrics.deliverySize.observe(stored.bytes);
  try {
    await ctx.onDelivered(stored.deliveryId);
  } catch (error) {
    ctx.metrics.deliveryHookFailures.inc();
    ctx.emit({ type: 'delivery-hook-failed', deliveryId: stored.deliveryId, error });
  }
}

/** recon's own probe of its callback base (a token of recon.callback_probes); a failure to tell is no probe. */
async function isProbe(ctx: ReceiverContext, token: string): Promise<boolean> {
  try {
    return await ctx.deliveryQueries.run(() => receiveProbe(ctx.db, token, ctx.now()));
  } catch {
    return false;
  }
}

function busy(
  ctx: ReceiverContext,
  request: IncomingMessage,
  response: ServerResponse,
  token: string,
  error: GateBusyError,
): void {
  ctx.metrics.deliveriesRefused.inc({ reason: 'busy' });
  ctx.emit({
    type: 'delivery-refused',
    status: 503,
    reason: 'busy',
    message: error.message,
    tokenPrefix: tokenPrefix(token),
  });
  answerEarly(request, response, 503, error.message, { 'retry-after': RETRY_AFTER_SECONDS });
}

/** Enough of a token to match a refusal with the request it answers; too little to deliver on it. */
function tokenPrefix(token: string): string {
  return `${token.slice(0, 4)}...`;
}
