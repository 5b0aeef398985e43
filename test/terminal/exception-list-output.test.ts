import { describe, expect, it } from 'vitest';
import type { ExceptionListItem } from '../../src/exceptions/exception-list.ts';
import { formatExceptionTable } from '../../src/terminal/exception-list-output.ts';

const item: ExceptionListItem = {
  orderId: 'ORD-\u001b[2J1',
  status: 'amount_mismatch',
  currency: 'EUR',
  firstSeen: new Date('2026-11-01T00:00:00Z'),
  orderAgeDays: 3,
  expectedMinor: '1000',
  settledMinor: '900',
  atRiskMinor: '100',
  expected: '10.00',
  settled: '9.00',
  atRisk: '1.00',
  reason: null,
  acknowledged: true,
  acknowledgedBy: 'mallory\u001b]0;owned\u0007',
  acknowledgedAt: new Date('2026-11-02T00:00:00Z'),
  // A note written from any accountant's SQL tool: an escape sequence would clear or retitle the reader's terminal.
  lastNote: 'refunded\u001b[31m by hand\u009b2J',
  lastNoteBy: 'mallory',
  lastNoteAt: new Date('2026-11-02T00:00:00Z'),
  acknowledgedLogin: 'recon',
  lastNoteLogin: 'recon',
};

describe('recon exceptions list as a table', () => {
  it("shows people's text with its control characters made visible, never sent to the terminal", () => {
    const table = formatExceptionTable({ items: [item], total: 1 });
    // eslint-disable-next-line no-control-regex
    expect(table).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(table).toContain('ORD-\uFFFD[2J1');
    // The name given beside the login that gave it: a name alone could claim anybody.
    expect(table).toContain('by mallory\uFFFD]0;owned\uFFFD (login recon)');
    expect(table).toContain('refunded\uFFFD[31m by hand\uFFFD2J');
  });
});
