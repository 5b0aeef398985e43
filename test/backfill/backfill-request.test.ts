import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { backfillFileIdentity, backfillFileName } from '../../src/backfill/backfill-request.ts';
import { readExportAnswer } from '../../src/parse/export-answer.ts';

const AT = new Date('2026-11-20T15:00:03.456Z');

describe('backfillFileName', () => {
  it('says what was asked and when, to the second in UTC', () => {
    expect(backfillFileName(['ORD-1', 'ORD-2'], AT)).toBe('backfill:getTransactions 2026-11-20T15:00:03Z ORD-1;ORD-2');
  });

  it('lists ids up to 100 characters and counts the rest', () => {
    const ids = Array.from({ length: 200 }, (_, i) => `order-${String(i).padStart(34, '0')}`);
    const name = backfillFileName(ids, AT);
    expect(name).toBe(`backfill:getTransactions 2026-11-20T15:00:03Z ${ids[0]};${ids[1]} (+198 more)`);
  });

  it('lists the first id even when it alone is long', () => {
    expect(backfillFileName(['x'.repeat(40), 'y'], new Date('2026-11-20T15:00:03Z'))).toBe(
      `backfill:getTransactions 2026-11-20T15:00:03Z ${'x'.repeat(40)};y`,
    );
  });
});

describe('backfillFileIdentity', () => {
  it("describes the answer's canonical text as a file's bytes, arrived by backfill: sha256, size, no compression", () => {
    const answer = readExportAnswer(['ORD-1'], [{ TRANSACTIONID: 't1', AMOUNT: '1.00 €' }], []);
    expect(backfillFileIdentity(answer, ['ORD-1'], AT)).toEqual({
      name: 'backfill:getTransactions 2026-11-20T15:00:03Z ORD-1',
      arrival: { kind: 'backfill', askedAt: AT },
      sha256: createHash('sha256').update(answer.text, 'utf8').digest('hex'),
      sizeBytes: Buffer.byteLength(answer.text, 'utf8'),
      compression: 'none',
    });
  });
});
