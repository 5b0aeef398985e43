import type { SandboxTransaction } from '../store.ts';

/**
 * Export columns the sandbox cannot know from a request (the service learns them from the card network):
 * CARDTYPE, CARDCOUNTRY, 3DSECURE, 3DSGLOBALSTATUS. They are derived from the order's first transaction, so
 * every row of an order shows the same card, and derived deterministically, so a seeded scenario repeats.
 */
export interface CardDetails {
  readonly cardType: string;
  readonly cardCountry: string;
  readonly threeDSecure: 'yes' | 'no';
}

const INSTALMENT_CARD_TYPES = ['CB', 'VISA', 'MASTERCARD'] as const;
const CARD_COUNTRIES = ['FR', 'FR', 'FR', 'BE', 'DE', 'ES', 'IT', 'NL'] as const;
const WALLET_CARD_TYPE = 'WALLET';

export function deriveCardDetails(origin: SandboxTransaction): CardDetails {
  const draw = fnv1a(origin.transactionId);
  const billingCountry = origin.request.BILLINGCOUNTRY;
  const cardCountry =
    typeof billingCountry === 'string' && /^[A-Z]{2}$/.test(billingCountry)
      ? billingCountry
      : CARD_COUNTRIES[draw % CARD_COUNTRIES.length]!;
  if (origin.method === 'wallet') return { cardType: WALLET_CARD_TYPE, cardCountry, threeDSecure: 'no' };
  return {
    cardType: INSTALMENT_CARD_TYPES[(draw >>> 8) % INSTALMENT_CARD_TYPES.length]!,
    cardCountry,
    // Most instalment card checks go through 3-D Secure; a few are exempted.
    threeDSecure: (draw >>> 16) % 5 === 0 ? 'no' : 'yes',
  };
}

/** 3DSGLOBALSTATUS: the outcome of the 3-D Secure step, empty when there was none. */
export function threeDSecureStatus(card: CardDetails, transaction: SandboxTransaction): string {
  if (card.threeDSecure === 'no') return '';
  if (transaction.status === 'refused') return 'FAILED';
  if (transaction.status === 'awaiting-cardholder') return '';
  return 'OK';
}

/** 32-bit FNV-1a: a stable, dependency-free spread of an id over small tables. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
