import { createReadStream } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MAX_RECORD_CHARS } from '../../src/parse/csv-scanner.ts';
import { parseCsv, type CsvRecord, type ParsedCsv } from '../../src/parse/parse-csv.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures');

async function parseFixture(name: string): Promise<ParsedCsv> {
  return parseCsv(createReadStream(path.join(FIXTURES, name)), { label: `fixtures/${name}` });
}

async function parseText(text: string | Buffer, chunkBytes = 64 * 1024): Promise<ParsedCsv> {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkBytes) chunks.push(bytes.subarray(i, i + chunkBytes));
  return parseCsv(Readable.from(chunks), { label: 'test.csv' });
}

async function allRecords(parsed: ParsedCsv): Promise<CsvRecord[]> {
  const records: CsvRecord[] = [];
  for await (const batch of parsed.records) records.push(...batch);
  return records;
}

describe('parseCsv on the fixtures', () => {
  it('reads the reference file: BOM dropped, `;`, CRLF, quoted headers and values, an embedded newline', async () => {
    const parsed = await parseFixture('semicolon-bom-crlf.csv');
    expect(parsed.delimiter).toBe(';');
    expect(parsed.header[0]).toBe('IDENTIFIER');
    expect(parsed.header).toContain('BILLINGFEES INCL. VAT');
    expect(parsed.header).toContain('RULE APPLIED');
    const records = await allRecords(parsed);
    expect(records).toHaveLength(10);
    const column = (name: string) => parsed.header.indexOf(name);
    expect(records[1]!.values[column('CARDFULLNAME')]).toBe('Jean "JJ" Dupont');
    expect(records[2]!.values[column('RULE APPLIED')]).toBe('velocity; amount > 1000');
    expect(records[3]!.values[column('CLIENTADDRESS')]).toBe('12 rue de la Paix\n75002 Paris');
    expect(records.every((record) => record.values.length === parsed.header.length)).toBe(true);
    // No value keeps the CR of a CRLF line end.
    expect(records.flatMap((record) => record.values).some((value) => value.includes('\r'))).toBe(false);
    // The record after the two-line one starts on line 7.
    expect(records.map((record) => record.line)).toEqual([2, 3, 4, 5, 7, 8, 9, 10, 11, 12]);
    expect(records[5]!.values[column('CURRENCY')]).toBe('JPY');
    expect(records[6]!.values[column('AMOUNT')]).toBe('12.345');
  });

  it('detects `,` and unquotes every value of a quote-all file', async () => {
    const parsed = await parseFixture('comma-quoted.csv');
    expect(parsed.delimiter).toBe(',');
    const records = await allRecords(parsed);
    expect(records).toHaveLength(8);
    expect(records[0]!.values[parsed.header.indexOf('CLIENTADDRESS')]).toBe('2 rue de la Paix, 75002 Paris');
  });

  it('yields the rows of a bad-rows file, including one with too few columns, on their lines', async () => {
    const parsed = await parseFixture('bad-rows.csv');
    const records = await allRecords(parsed);
    expect(records).toHaveLength(13);
    expect(records.at(-1)).toMatchObject({ line: 14 });
    expect(records.at(-1)!.values).toHaveLength(5);
  });

  it('gives a header and no records for a header-only file', async () => {
    const parsed = await parseFixture('header-only.csv');
    expect(parsed.header).toHaveLength(19);
    expect(await allRecords(parsed)).toEqual([]);
  });

  it('fails an unclosed quote with the line where its record starts', async () => {
    const parsed = await parseFixture('unclosed-quote.csv');
    await expectReconError(() => allRecords(parsed), 'CSV_MALFORMED', 'fixtures/unclosed-quote.csv', 'line 4');
  });

  it('fails binary data as not UTF-8', async () => {
    await expectReconError(
      () => parseFixture('not-csv.bin'),
      'CSV_MALFORMED',
      'fixtures/not-csv.bin',
      'line 1',
      'UTF-8',
    );
  });
});

describe('parseCsv on text', () => {
  it('picks the delimiter from the header, not from data rows with commas in them', async () => {
    const parsed = await parseText('TRANSACTIONID;CLIENTADDRESS\nA1;1, rue A, Paris\n');
    expect(parsed.delimiter).toBe(';');
    expect(await allRecords(parsed)).toEqual([{ line: 2, values: ['A1', '1, rue A, Paris'] }]);
  });

  it('ignores delimiters inside quoted header names when detecting', async () => {
    const parsed = await parseText('"A;B;C",X,Y\n1,2,3\n');
    expect(parsed.delimiter).toBe(',');
    expect(parsed.header).toEqual(['A;B;C', 'X', 'Y']);
  });

  it('takes `;` for a one-column header', async () => {
    const parsed = await parseText('TRANSACTIONID\nA1\n');
    expect(parsed.delimiter).toBe(';');
    expect(await allRecords(parsed)).toEqual([{ line: 2, values: ['A1'] }]);
  });

  it('skips empty lines but counts them, and reads a last line without a line break', async () => {
    const parsed = await parseText('\n\nA;B\r\n\r\n1;2\n\n\n3;4');
    expect(parsed.header).toEqual(['A', 'B']);
    expect(await allRecords(parsed)).toEqual([
      { line: 5, values: ['1', '2'] },
      { line: 8, values: ['3', '4'] },
    ]);
  });

  it('keeps a quote inside an unquoted value as a character', async () => {
    const parsed = await parseText('A;B\nsay "hi";x\n');
    expect(await allRecords(parsed)).toEqual([{ line: 2, values: ['say "hi"', 'x'] }]);
  });

  it('reads empty quoted values, a trailing delimiter and quoted line breaks', async () => {
    const parsed = await parseText('A;B;C\n"";"x\r\ny";\n"";"";""\n');
    expect(await allRecords(parsed)).toEqual([
      { line: 2, values: ['', 'x\r\ny', ''] },
      { line: 4, values: ['', '', ''] },
    ]);
  });

  it('fails text after a closing quote', async () => {
    await expectReconError(
      async () => allRecords(await parseText('A;B\n1;2\n"x"y;3\n')),
      'CSV_MALFORMED',
      'test.csv',
      'line 3',
      'closing quote',
    );
  });

  it('fails an empty input, and one of only empty lines and a BOM, as having no header', async () => {
    await expectReconError(() => parseText(''), 'CSV_HEADER', 'test.csv', 'no header');
    await expectReconError(() => parseText('\uFEFF\r\n\n'), 'CSV_HEADER', 'test.csv', 'no header');
  });

  it('fails Latin-1 text on the line of the first bad byte', async () => {
    const latin1 = Buffer.from('A;B\n1;2\n3;Lef\xe8vre\n', 'latin1');
    await expectReconError(
      async () => allRecords(await parseText(latin1)),
      'CSV_MALFORMED',
      'test.csv',
      'line 3',
      'UTF-8',
    );
  });

  it('fails a NUL byte on its line', async () => {
    await expectReconError(
      async () => allRecords(await parseText('A;B\n1;2\n3;\u00004\n')),
      'CSV_MALFORMED',
      'test.csv',
      'line 3',
      'NUL',
    );
  });

  it('fails a runaway quote once the record passes the size limit, without reading the rest', async () => {
    let served = 0;
    const endless = new Readable({
      read() {
        served += 1;
        this.push(served === 1 ? 'A;B\n1;"never closed' : 'x'.repeat(64 * 1024));
      },
    });
    const parsed = await parseCsv(endless, { label: 'endless.csv' });
    await expectReconError(
      () => allRecords(parsed),
      'CSV_MALFORMED',
      'endless.csv',
      'line 2',
      String(MAX_RECORD_CHARS),
    );
    expect(endless.destroyed).toBe(true);
  });

  it('decodes characters split across chunks and gives the same records for any chunking', async () => {
    const text = '\uFEFFA;"B C"\r\nLucía;"x;""y""\n€"\r\n\r\n日本;z\n';
    const whole = await allRecords(await parseText(text));
    expect(whole).toEqual([
      { line: 2, values: ['Lucía', 'x;"y"\n€'] },
      { line: 5, values: ['日本', 'z'] },
    ]);
    for (const size of [1, 2, 3, 5, 7]) expect(await allRecords(await parseText(text, size))).toEqual(whole);
  });

  it('yields batches of at least 1000 records but the last, in order', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `T${i};${i}`).join('\n');
    const parsed = await parseText(`TRANSACTIONID;N\n${rows}\n`, 1000);
    const sizes: number[] = [];
    let expectedLine = 2;
    for await (const batch of parsed.records) {
      sizes.push(batch.length);
      for (const record of batch) expect(record.line).toBe(expectedLine++);
    }
    expect(sizes.reduce((a, b) => a + b)).toBe(5000);
    expect(sizes.slice(0, -1).every((size) => size >= 1000)).toBe(true);
    expect(sizes.length).toBeGreaterThan(2);
  });

  it('destroys the source when the consumer stops early', async () => {
    const source = createReadStream(path.join(FIXTURES, 'bad-rows.csv'), { highWaterMark: 64 });
    const parsed = await parseCsv(source, { label: 'bad-rows.csv' });
    for await (const batch of parsed.records) {
      expect(batch.length).toBeGreaterThan(0);
      break;
    }
    expect(source.destroyed).toBe(true);
  });

  it('passes errors of the source through unchanged', async () => {
    const failing = new Readable({
      read() {
        this.destroy(new Error('disk on fire'));
      },
    });
    await expect(parseCsv(failing, { label: 'x.csv' })).rejects.toThrow('disk on fire');
  });
});
