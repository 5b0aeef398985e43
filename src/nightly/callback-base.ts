import type { ServeConfig } from '../config/config.ts';
import { ReconError } from '../errors.ts';
import { callbackEndpoint } from '../receive/callback-url.ts';

/** RECON_CALLBACK_BASE_URL, checked at start-up (it must leave room for a token in the 32 characters). */
export function requireCallbackBase(serve: ServeConfig): string {
  if (!serve.callbackBaseUrl) {
    throw new ReconError(
      'CONFIG',
      "set RECON_CALLBACK_BASE_URL (the public URL the service posts exports to, e.g. https://rc.shop.example/: at most 24 characters, so that a token of 8 fits in CALLBACKURL's 32)",
    );
  }
  callbackEndpoint(serve.callbackBaseUrl);
  return serve.callbackBaseUrl;
}
