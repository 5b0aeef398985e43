import type { IncomingMessage, ServerResponse } from 'node:http';
import { openDeliveryUpload } from './delivery-upload.ts';
import { TOKEN_PATTERN } from './export-token.ts';
import type { ReceiverContext } from './receiver-context.ts';
import { ClientGoneError, Refusal } from './refusal.ts';
import { mediaType } from './request-body.ts';
import { answer, answerEarly } from './respond.ts';
import { storeDelivery } from './store-delivery.ts';

/**
 * POST <callback path><token>: the delivery is stored (store-delivery.ts) before it is answered 200, then handed
 * to onDelivered. A failing onDelivered changes nothing for the sender: the delivery stays in state 'received',
 * where the serve command finds it again.
 */
export async function handleDelivery(ctx: ReceiverContext, request: IncomingMessage, response: ServerResponse, token: string): Promise<void> {
  const refuse = (refusal: Refusal) => {
    ctx.metrics.deliveriesRefused.inc({ reason: refusal.reason });
    ctx.emit({ type: 'delivery-refused', status: refusal.status, reason: refusal.reason, message: refusal.message });
    answerEarly(request, response, refusal.status, refusal.message);
  };
  if (!TOKEN_PATTERN.test(token)) return refuse(new Refusal(404, 'unknown_token', 'unknown token'));
  // A raw body announces its size: refuse it before reading any of it.
  const declared = Number(request.headers['content-length']);
  if (mediaType(request.headers['content-type']) !== 'multipart/form-data' && declared > ctx.maxFileBytes) {
    return refuse(new Refusal(413, 'too_large', `body over RECON_MAX_FILE_BYTES (${ctx.maxFileBytes} bytes)`));
  }

  let stored;
  try {
    stored = await storeDelivery(ctx.db, token, openDeliveryUpload(request), {
      maxFileBytes: ctx.maxFileBytes,
      now: ctx.now,
      onReceiving: (ids) => ctx.emit({ type: 'delivery-receiving', ...ids }),
    });
  } catch (error) {
    if (error instanceof Refusal) return refuse(error);
    if (error instanceof ClientGoneError) {
      ctx.metrics.deliveriesRefused.inc({ reason: 'aborted' });
      ctx.emit({ type: 'delivery-refused', status: null, reason: 'aborted', message: error.message });
      return;
    }
    ctx.metrics.deliveriesRefused.inc({ reason: 'error' });
    ctx.emit({ type: 'internal-error', path: request.url ?? '', error });
    // The sender may try again: nothing was stored.
    return answerEarly(request, response, 500, 'the delivery could not be stored, try again later');
  }

  ctx.metrics.deliveriesAccepted.inc({ outcome: stored.outcome });
  ctx.emit({ type: 'delivery-accepted', ...stored });
  answer(response, 200, 'OK');
  if (stored.outcome === 'repeated') return;
  ctx.metrics.deliveredBytes.inc({}, stored.bytes);
  try {
    await ctx.onDelivered(stored.deliveryId);
  } catch (error) {
    ctx.metrics.deliveryHookFailures.inc();
    ctx.emit({ type: 'delivery-hook-failed', deliveryId: stored.deliveryId, error });
  }
}
