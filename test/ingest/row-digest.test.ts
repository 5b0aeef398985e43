import { describe, expect, it } from 'vitest';
import { recordDigest, recordDigestSeed } from '../../src/ingest/row-digest.ts';

describe('recordDigest', () => {
  const seed = recordDigestSeed(['TRANSACTIONID', 'ORDERID'], 'Europe/Paris');

  it('is a non-negative integer of at most 53 bits, as decimal digits, the same for the same record', () => {
    const digest = recordDigest(['T1', 'ORDER-1'], seed);
    expect(digest).toMatch(/^\d+$/);
    expect(Number(digest)).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
    expect(recordDigest(['T1', 'ORDER-1'], seed)).toBe(digest);
  });

  it('differs for another value, the same characters split otherwise, another header or another zone', () => {
    const digest = recordDigest(['T1', 'ORDER-1'], seed);
    expect(recordDigest(['T1', 'ORDER-2'], seed)).not.toBe(digest);
    expect(recordDigest(['T1O', 'RDER-1'], seed)).not.toBe(digest);
    expect(recordDigest(['T1', 'ORDER-1'], recordDigestSeed(['ORDERID', 'TRANSACTIONID'], 'Europe/Paris'))).not.toBe(
      digest,
    );
    expect(recordDigest(['T1', 'ORDER-1'], recordDigestSeed(['TRANSACTIONID', 'ORDERID'], 'UTC'))).not.toBe(digest);
  });

  it('keeps the digests it gave before: rows stored with them would otherwise all read as changed', () => {
    expect(seed).toBe(3602589268);
    expect(recordDigest(['T1', 'ORDER-1'], seed)).toBe('3714994402456416');
    const exportSeed = recordDigestSeed(
      ['TRANSACTIONID', 'IDENTIFIER', 'ORDERID', 'OPERATIONTYPE', 'DATE', 'AMOUNT', 'CURRENCY', 'EXECCODE'],
      'UTC',
    );
    expect(
      recordDigest(
        ['T000001005117', '', 'ORD-0000500993', 'payment', '2026-11-19 10:11:12', '141075', 'EUR', '0000'],
        exportSeed,
      ),
    ).toBe('8638633986104781');
  });

  it('spreads a million similar records without a collision', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1_000_000; i++)
      seen.add(recordDigest([`TX${String(i).padStart(12, '0')}`, String(i % 1000)], seed));
    expect(seen.size).toBe(1_000_000);
  });
});
