import type { SandboxTransaction } from '../store.ts';

/**
 * BILLINGFEES INCL. VAT, in minor units. The reference omits the value's format and the tariff, so the sandbox
 * applies a plausible one: a rate plus a fixed part (VAT included) on the rows that move money to the merchant,
 * succeeded payments and captures; authorizations, refunds and failed rows cost nothing.
 */
const TARIFF = {
  instalment: { basisPoints: 240n, fixedMinorUnits: 30n },
  wallet: { basisPoints: 140n, fixedMinorUnits: 25n },
} as const;

export function billingFeesMinorUnits(transaction: SandboxTransaction): bigint {
  const charged =
    transaction.status === 'succeeded' &&
    (transaction.operationType === 'payment' || transaction.operationType === 'capture');
  if (!charged) return 0n;
  const { basisPoints, fixedMinorUnits } = TARIFF[transaction.method];
  // Half-up rounding to the cent, in integers.
  return (transaction.amount * basisPoints + 5_000n) / 10_000n + fixedMinorUnits;
}
