import { describe, expect, it } from 'vitest';
import { readExportAnswer } from '../../src/parse/export-answer.ts';

describe('readExportAnswer', () => {
  it('writes the answer as canonical text: the ids asked on line 1, then one record per line, keys sorted', () => {
    const answer = readExportAnswer(
      ['A', 'B'],
      [
        { TRANSACTIONID: 't1', ORDERID: 'A', AMOUNT: '10.00' },
        { AMOUNT: '2.50', ORDERID: 'B', TRANSACTIONID: 't2' },
      ],
      ['TRANSACTIONID'],
    );
    expect(answer.text).toBe(
      [
        '{"ORDERID":["A","B"],"DATA":[',
        '{"AMOUNT":"10.00","ORDERID":"A","TRANSACTIONID":"t1"},',
        '{"AMOUNT":"2.50","ORDERID":"B","TRANSACTIONID":"t2"}',
        ']}',
      ].join('\n'),
    );
    expect(JSON.parse(answer.text)).toEqual({
      ORDERID: ['A', 'B'],
      DATA: [
        { TRANSACTIONID: 't1', ORDERID: 'A', AMOUNT: '10.00' },
        { TRANSACTIONID: 't2', ORDERID: 'B', AMOUNT: '2.50' },
      ],
    });
  });

  it('gives the records as a csv gives them: the keys as header, values in its order, line numbers from 2', () => {
    const answer = readExportAnswer(
      ['A'],
      [
        { TRANSACTIONID: 't1', AMOUNT: '10.00' },
        { AMOUNT: '2.50', TRANSACTIONID: 't2' },
      ],
      [],
    );
    expect(answer.header).toEqual(['TRANSACTIONID', 'AMOUNT']);
    expect(answer.records).toEqual([
      { line: 2, values: ['t1', '10.00'], missing: [], raw: '{"AMOUNT":"10.00","TRANSACTIONID":"t1"}' },
      { line: 3, values: ['t2', '2.50'], missing: [], raw: '{"AMOUNT":"2.50","TRANSACTIONID":"t2"}' },
    ]);
  });

  it('says which keys a record lacks that others have, and keeps a key only some records have', () => {
    const answer = readExportAnswer(
      ['A'],
      [
        { TRANSACTIONID: 't1', AMOUNT: '1.00' },
        { TRANSACTIONID: 't2', EXTRA: 'x' },
      ],
      [],
    );
    expect(answer.header).toEqual(['TRANSACTIONID', 'AMOUNT', 'EXTRA']);
    expect(answer.records.map((record) => record.missing)).toEqual([['EXTRA'], ['AMOUNT']]);
  });

  it('takes the columns asked for as the header of an empty answer, whose text still names the ids', () => {
    const answer = readExportAnswer(['A'], [], ['TRANSACTIONID', 'AMOUNT']);
    expect(answer).toEqual({ text: '{"ORDERID":["A"],"DATA":[\n]}', header: ['TRANSACTIONID', 'AMOUNT'], records: [] });
    expect(readExportAnswer(['B'], [], ['TRANSACTIONID']).text).not.toBe(answer.text);
  });

  it('sorts integer-like keys as text and keeps a line break inside a value on its record line', () => {
    const answer = readExportAnswer(['A'], [{ b: '1', '10': '2', '9': 'two\nlines' }], []);
    expect(answer.records[0]!.raw).toBe('{"10":"2","9":"two\\nlines","b":"1"}');
    expect(answer.text.split('\n')).toHaveLength(3);
  });
});
