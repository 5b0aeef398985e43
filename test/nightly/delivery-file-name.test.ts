import { describe, expect, it } from 'vitest';
import { deliveryFileName, type DeliveryFacts } from '../../src/nightly/delivery-file-name.ts';

const NIGHTLY: DeliveryFacts = {
  deliveryId: '17',
  requestId: '40',
  runDate: '2026-11-26',
  batch: 3,
  attempt: 2,
  filename: 'transactions.csv.gz',
  askedAt: new Date('2026-11-26T02:00:00Z'),
};

describe('deliveryFileName', () => {
  it("names a nightly delivery by its run date, batch, attempt, the service's filename and the delivery", () => {
    expect(deliveryFileName(NIGHTLY)).toBe('nightly 2026-11-26 batch 3 attempt 2: transactions.csv.gz (delivery 17)');
  });

  it("leaves the filename out of a raw body's name, and names a request of no nightly run by its id", () => {
    expect(deliveryFileName({ ...NIGHTLY, filename: null })).toBe('nightly 2026-11-26 batch 3 attempt 2 (delivery 17)');
    expect(deliveryFileName({ ...NIGHTLY, runDate: null, batch: null, attempt: 1 })).toBe(
      'export request 40: transactions.csv.gz (delivery 17)',
    );
    expect(deliveryFileName({ ...NIGHTLY, runDate: null, batch: null, filename: null })).toBe(
      'export request 40 (delivery 17)',
    );
  });

  it("keeps of a stranger's filename its last path segment, in harmless characters, at most 100 of them", () => {
    expect(deliveryFileName({ ...NIGHTLY, filename: '../../etc/ex port;1.csv.gz' })).toBe(
      'nightly 2026-11-26 batch 3 attempt 2: ex_port_1.csv.gz (delivery 17)',
    );
    expect(deliveryFileName({ ...NIGHTLY, filename: 'C:\\exports\\day\u001b[2J\n.csv' })).toBe(
      'nightly 2026-11-26 batch 3 attempt 2: day_2J_.csv (delivery 17)',
    );
    expect(deliveryFileName({ ...NIGHTLY, filename: 'relevé-été.csv' })).toBe(
      'nightly 2026-11-26 batch 3 attempt 2: relev_-_t_.csv (delivery 17)',
    );
    expect(deliveryFileName({ ...NIGHTLY, filename: `${'x'.repeat(150)}.csv` })).toBe(
      `nightly 2026-11-26 batch 3 attempt 2: ${'x'.repeat(100)} (delivery 17)`,
    );
    // Nothing left of it: named as a raw body is.
    expect(deliveryFileName({ ...NIGHTLY, filename: 'exports/' })).toBe(
      'nightly 2026-11-26 batch 3 attempt 2 (delivery 17)',
    );
  });
});
