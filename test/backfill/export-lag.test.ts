import { describe, expect, it } from 'vitest';
import { exportLagNote, exportMayLag, type LagFacts } from '../../src/backfill/export-lag.ts';

const AS_OF = new Date('2026-11-20T15:00:00Z');
const minutesAgo = (minutes: number) => new Date(AS_OF.getTime() - minutes * 60_000);
const facts = (overrides: Partial<LagFacts>): LagFacts => ({
  status: 'pending',
  transactions: 0,
  orderCreatedAt: minutesAgo(5),
  ...overrides,
});

describe('exportMayLag', () => {
  it('holds for an order without transactions created within the grace period', () => {
    expect(exportMayLag(facts({}), AS_OF, 24)).toBe(true);
    expect(
      exportMayLag(facts({ status: 'missing_at_provider', orderCreatedAt: minutesAgo(23 * 60 + 59) }), AS_OF, 24),
    ).toBe(true);
  });

  it('holds within the last hour when the grace period is shorter, and not at or past its end', () => {
    expect(exportMayLag(facts({ status: 'missing_at_provider', orderCreatedAt: minutesAgo(59) }), AS_OF, 0)).toBe(true);
    expect(exportMayLag(facts({ status: 'missing_at_provider', orderCreatedAt: minutesAgo(60) }), AS_OF, 0)).toBe(
      false,
    );
    expect(exportMayLag(facts({ orderCreatedAt: minutesAgo(24 * 60) }), AS_OF, 24)).toBe(false);
  });

  it('does not hold once the service returned a transaction, for a matched order, or for an ORDERID without an order', () => {
    expect(exportMayLag(facts({ transactions: 1 }), AS_OF, 24)).toBe(false);
    expect(exportMayLag(facts({ status: 'matched' }), AS_OF, 24)).toBe(false);
    expect(exportMayLag(facts({ orderCreatedAt: null }), AS_OF, 24)).toBe(false);
  });
});

describe('exportLagNote', () => {
  it("says the order's age in words a person reads at a glance", () => {
    expect(exportLagNote('ORD-1', minutesAgo(0.5), AS_OF)).toMatch(
      /^ORD-1 was created less than a minute ago and the service returned no transaction/,
    );
    expect(exportLagNote('ORD-1', minutesAgo(1), AS_OF)).toContain('created 1 minute ago');
    expect(exportLagNote('ORD-1', minutesAgo(59), AS_OF)).toContain('created 59 minutes ago');
    expect(exportLagNote('ORD-1', minutesAgo(150), AS_OF)).toContain('created 2 hours ago');
    expect(exportLagNote('ORD-1', minutesAgo(5), AS_OF)).toMatch(
      /its export may lag behind very recent operations, so backfill it again later before taking it as missing$/,
    );
  });
});
