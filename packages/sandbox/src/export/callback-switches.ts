/**
 * How the sandbox delivers CALLBACKURL exports. The service documents none of this (service-facts.md: the callback
 * delivery is unknown), so the sandbox can play each way a receiver must survive: the file as a multipart upload or
 * as the raw body, a delivery lost on the way, a delivery that arrives twice.
 */
export const CALLBACK_FORMATS = ['multipart', 'raw'] as const;
export type CallbackFormat = (typeof CALLBACK_FORMATS)[number];

export interface CallbackSwitches {
  /** `multipart` (default): a form upload with the file in part `file`; `raw`: the file's bytes as the body. */
  readonly format: CallbackFormat;
  /** The sandbox's first N deliveries are lost: never sent, though their requests were answered 0000. */
  readonly dropFirst: number;
  /** Every delivery is sent twice, the second once the first has succeeded or given up. */
  readonly duplicate: boolean;
}

export const DEFAULT_CALLBACK_SWITCHES: CallbackSwitches = { format: 'multipart', dropFirst: 0, duplicate: false };

/** The switches of one sandbox, with its count of deliveries so far (the drops count per sandbox). */
export interface CallbackDispatch extends CallbackSwitches {
  /** Counts one more delivery; true when it is among the first `dropFirst`, so it must be lost. */
  loseNext(): boolean;
}

export function createCallbackDispatch(switches: Partial<CallbackSwitches> = {}): CallbackDispatch {
  const settled: CallbackSwitches = { ...DEFAULT_CALLBACK_SWITCHES, ...switches };
  if (!Number.isInteger(settled.dropFirst) || settled.dropFirst < 0) {
    throw new RangeError(`dropCallbacks is a whole number of deliveries, 0 or more (got ${settled.dropFirst})`);
  }
  let deliveries = 0;
  return {
    ...settled,
    loseNext: () => ++deliveries <= settled.dropFirst,
  };
}
