import { describe, expect, it } from 'vitest';
import { batchOrderIds, checkOrderId, parseOrderIdsFile, uniqueOrderIds } from '../../src/backfill/order-id-list.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

describe('parseOrderIdsFile', () => {
  it('reads one id per line, skipping blank lines and # comments, trimming spaces, CRs and a BOM', () => {
    const text = '\uFEFFORD-1\r\n\r\n# the ones from the ticket\n  ORD-2  \n\t# indented comment\nORD 3\n';
    expect(parseOrderIdsFile(text, 'ids.txt')).toEqual(['ORD-1', 'ORD-2', 'ORD 3']);
  });

  it('reads an empty file or one of comments as no id', () => {
    expect(parseOrderIdsFile('', 'ids.txt')).toEqual([]);
    expect(parseOrderIdsFile('# nothing yet\n\n', 'ids.txt')).toEqual([]);
  });

  it('refuses an id the service cannot be asked for, naming the file and line', async () => {
    await expectReconError(
      async () => parseOrderIdsFile(`ORD-1\n${'x'.repeat(41)}\n`, 'ids.txt'),
      'USAGE',
      'ids.txt:2',
      '1-40 characters',
    );
    await expectReconError(
      async () => parseOrderIdsFile('ORD-1\n\nA;B\n', 'ids.txt'),
      'USAGE',
      'ids.txt:3',
      '"A;B" contains ";"',
    );
  });
});

describe('checkOrderId', () => {
  it('takes ids of 1 to 40 characters, counted as characters, not bytes', () => {
    for (const id of ['1', 'x'.repeat(40), 'é'.repeat(40), 'ORD #7'])
      expect(() => checkOrderId(id, '--order-id')).not.toThrow();
  });

  it('refuses an empty id, a longer one and one with the separator, naming where it was given', async () => {
    await expectReconError(async () => checkOrderId('  ', '--order-id'), 'USAGE', '--order-id', 'empty');
    await expectReconError(async () => checkOrderId('x'.repeat(41), '--order-id'), 'USAGE', '--order-id');
    await expectReconError(async () => checkOrderId('A;B', '--order-id'), 'USAGE', '--order-id', 'separates the ids');
  });
});

describe('uniqueOrderIds and batchOrderIds', () => {
  it('keeps each id once, in the order first given', () => {
    expect(uniqueOrderIds(['b', 'a', 'b', 'c', 'a'])).toEqual(['b', 'a', 'c']);
  });

  it('splits the ids into requests of at most the batch size, in order', () => {
    expect(batchOrderIds(['a', 'b', 'c', 'd', 'e'], 2)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(batchOrderIds(['a', 'b'], 200)).toEqual([['a', 'b']]);
    expect(batchOrderIds([], 3)).toEqual([]);
    expect(() => batchOrderIds(['a'], 0)).toThrow(RangeError);
  });
});
