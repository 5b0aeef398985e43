/**
 * Writes the small export files of `fixtures/` and their README (the table of expected counts that the
 * integration tests assert on). Deterministic: running it twice gives byte-identical files, so the
 * committed fixtures only change when this script does.
 *
 * Run with `node scripts/make-fixtures.ts` (or `npm run fixtures`). Needs `bzip2` on PATH: Node has no
 * bzip2 compressor. Zip files are written by the sandbox's zip writer (through zip-archive.ts) rather than the
 * `zip` CLI so that timestamps, data-descriptor flags, the zip64 form and the encryption header are under control.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { pseudoRandomBytes } from './pseudo-random-bytes.ts';
import { zipArchive } from './zip-archive.ts';
import { EXPORT_COLUMNS } from '@recon/protocol';

const FIXTURES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

// ---------------------------------------------------------------------------------------------------------------
// Export rows as the service writes them (payment-api-3.0.md, "Exported transaction record")

const ALL_COLUMNS = EXPORT_COLUMNS;

type Column = (typeof ALL_COLUMNS)[number];
type ExportRow = Record<string, string>;

const OPERATIONS = ['payment', 'authorization', 'capture', 'refund'];
const EXEC_CODES = ['0', '0', '4001', '0003', '0', '2'];
const CARD_TYPES = ['CB', 'VISA', 'MASTERCARD'];
const COUNTRIES = ['FR', 'DE', 'BE', 'ES'];
const NAMES = ['Jeanne Martin', 'Paul Lefèvre', 'Anna Schmidt', 'Lucía García', 'Marco Rossi'];

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** A good EUR row; `series` keeps TRANSACTIONIDs of different fixtures apart. */
function eurRow(series: number, n: number): ExportRow {
  const id = `A${series}${pad(n, 5)}`;
  const cents = 1_000 + ((n * 7_919 + series * 131) % 90_000);
  const minute = (n * 17) % 60;
  return {
    IDENTIFIER: 'ACME-SHOP',
    DATE: `2024-03-${pad(1 + (n % 28), 2)} ${pad((n * 5) % 24, 2)}:${pad(minute, 2)}:${pad((n * 13) % 60, 2)}`,
    TRANSACTIONID: id,
    ORDERID: `ORD-2024-${pad(series * 1000 + n, 6)}`,
    OPERATIONTYPE: OPERATIONS[n % OPERATIONS.length]!,
    AMOUNT: `${Math.floor(cents / 100)}.${pad(cents % 100, 2)}`,
    CURRENCY: 'EUR',
    'BILLINGFEES INCL. VAT': `0.${pad(10 + ((n * 3) % 80), 2)}`,
    EXECCODE: EXEC_CODES[n % EXEC_CODES.length]!,
    CLIENTEMAIL: `client${series}${pad(n, 3)}@example.com`,
    CLIENTADDRESS: `${1 + n} rue de la Paix, 75002 Paris`,
    CARDFULLNAME: NAMES[n % NAMES.length]!,
    CARDTYPE: CARD_TYPES[n % CARD_TYPES.length]!,
    CARDCOUNTRY: COUNTRIES[n % COUNTRIES.length]!,
    '3DSECURE': n % 2 === 0 ? 'yes' : 'no',
    '3DSGLOBALSTATUS': n % 2 === 0 ? 'OK' : '',
    'RULE APPLIED': n % 5 === 4 ? 'velocity' : '',
    SCHEDULE: n % 3 === 1 ? `[${1 + (n % 3)}-3]` : '',
    RETRY: n % 4 === 3 ? '[1-2]' : '',
  };
}

function eurRows(series: number, count: number): ExportRow[] {
  return Array.from({ length: count }, (_, i) => eurRow(series, i + 1));
}

/**
 * The reference good file's rows: EUR rows plus one JPY (no minor unit) and one KWD (three decimals) row,
 * a `;` and a `""` inside quoted values, an embedded newline, and the spring-forward night in Europe.
 */
function referenceRows(): ExportRow[] {
  const rows = eurRows(1, 10);
  rows[1] = { ...rows[1]!, CARDFULLNAME: 'Jean "JJ" Dupont' };
  rows[2] = { ...rows[2]!, 'RULE APPLIED': 'velocity; amount > 1000', DATE: '2024-03-31 01:30:00' };
  rows[3] = { ...rows[3]!, CLIENTADDRESS: '12 rue de la Paix\n75002 Paris' };
  rows[5] = { ...rows[5]!, AMOUNT: '1500', CURRENCY: 'JPY', 'BILLINGFEES INCL. VAT': '15' };
  rows[6] = { ...rows[6]!, AMOUNT: '12.345', CURRENCY: 'KWD', 'BILLINGFEES INCL. VAT': '0.120' };
  return rows;
}

// ---------------------------------------------------------------------------------------------------------------
// csv writing

interface CsvStyle {
  delimiter: ';' | ',';
  eol: '\n' | '\r\n';
  bom: boolean;
  /** Quote every value, as some spreadsheet exports do; otherwise only when needed (the service's style). */
  quoteAll: boolean;
}

const SERVICE_STYLE: CsvStyle = { delimiter: ';', eol: '\n', bom: false, quoteAll: false };

function csvField(value: string, style: CsvStyle, isHeader: boolean): string {
  const needsQuotes =
    style.quoteAll ||
    value.includes(style.delimiter) ||
    value.includes('"') ||
    value.includes('\n') ||
    value.includes('\r') ||
    (isHeader && value.includes(' '));
  return needsQuotes ? `"${value.replaceAll('"', '""')}"` : value;
}

function csvText(columns: readonly string[], rows: readonly ExportRow[], style: CsvStyle): string {
  const line = (values: readonly string[], isHeader: boolean) =>
    values.map((value) => csvField(value, style, isHeader)).join(style.delimiter) + style.eol;
  const body = rows
    .map((row) =>
      line(
        columns.map((column) => row[column] ?? ''),
        false,
      ),
    )
    .join('');
  return (style.bom ? '\uFEFF' : '') + line(columns, true) + body;
}

const serviceCsv = (rows: readonly ExportRow[], columns: readonly string[] = ALL_COLUMNS) =>
  Buffer.from(csvText(columns, rows, SERVICE_STYLE));

// ---------------------------------------------------------------------------------------------------------------
// Compression

/** Splits `data` at the given byte offsets (mid-line on purpose, as parallel compressors cut blocks). */
function splitAt(data: Buffer, offsets: readonly number[]): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (const offset of offsets) {
    parts.push(data.subarray(start, offset));
    start = offset;
  }
  parts.push(data.subarray(start));
  return parts;
}

function bzip2(data: Buffer): Buffer {
  const result = spawnSync('bzip2', ['-9', '-c'], { input: data, maxBuffer: 64 * 1024 * 1024 });
  if (result.error || result.status !== 0) {
    throw new Error(
      `bzip2 is needed to write the bzip2 fixtures: ${result.error?.message ?? result.stderr.toString()}`,
    );
  }
  return result.stdout;
}

const gzip = (data: Buffer) => gzipSync(data, { level: 9 });

function corruptMiddle(data: Buffer): Buffer {
  const copy = Buffer.from(data);
  const middle = Math.floor(copy.length / 2);
  for (let i = middle; i < middle + 16 && i < copy.length; i++) copy[i] = copy[i]! ^ 0x5a;
  return copy;
}

// ---------------------------------------------------------------------------------------------------------------
// The fixtures and what they are expected to give

interface Fixture {
  file: string;
  content: Buffer;
  exercises: string;
  /** Expected outcome of `recon ingest` on an empty database. */
  expect: { status: 'loaded'; rows: number; good: number; bad: number } | { status: 'failed'; code: string };
}

const loaded = (rows: number, bad = 0) => ({ status: 'loaded' as const, rows, good: rows - bad, bad });
const failed = (code: string) => ({ status: 'failed' as const, code });

function badRowsFile(): { content: Buffer; badLines: string[] } {
  const good = eurRows(20, 6);
  const bad: Array<[ExportRow, string]> = [
    [{ ...eurRow(20, 101), EXECCODE: '12345' }, 'EXECCODE 12345 (more than 4 digits)'],
    [{ ...eurRow(20, 102), AMOUNT: '12,30' }, 'AMOUNT 12,30 (decimal comma)'],
    [{ ...eurRow(20, 103), SCHEDULE: '[4-3]' }, 'SCHEDULE [4-3] (position after count)'],
    [{ ...eurRow(20, 104), DATE: '2024-02-30 10:00:00' }, 'DATE 2024-02-30 10:00:00 (no such day)'],
    [{ ...eurRow(20, 105), AMOUNT: '1500.5', CURRENCY: 'JPY' }, 'AMOUNT 1500.5 in JPY (JPY has no minor unit)'],
    [{ ...eurRow(20, 106), TRANSACTIONID: '' }, 'TRANSACTIONID empty'],
  ];
  // Good and bad rows alternate, so a test can check that line numbers of rejected rows are exact.
  const rows: ExportRow[] = [];
  const badLines: string[] = [];
  for (let i = 0; i < good.length; i++) {
    rows.push(good[i]!);
    const badRow = bad[i];
    if (badRow) {
      rows.push(badRow[0]);
      badLines.push(`line ${rows.length + 1}: ${badRow[1]}`);
    }
  }
  let text = csvText(ALL_COLUMNS, rows, SERVICE_STYLE);
  // A row that stops after 5 columns: the parser yields it, the normalizer rejects the column count.
  const short = csvText(ALL_COLUMNS.slice(0, 5), [eurRow(20, 107)], SERVICE_STYLE).split('\n')[1]!;
  text += `${short}\n`;
  badLines.push(`line ${rows.length + 2}: 5 columns instead of ${ALL_COLUMNS.length}`);
  return { content: Buffer.from(text), badLines };
}

/**
 * A bomb that parses as an export: a header and one row, then 50 MiB of empty lines, which deflate shrinks
 * about 1000 times. Only the decompression limits stop it (bare zeros would instead trip the parser's
 * record-length limit and prove nothing), and the skipped empty lines cost the parser next to nothing.
 */
function csvBomb(): Buffer {
  return Buffer.concat([serviceCsv([eurRow(24, 1)]), Buffer.alloc(50 * 1024 * 1024, '\n')]);
}

function newerReferenceRows(): ExportRow[] {
  const rows = referenceRows();
  // Three transactions moved on since the first export; the other seven are unchanged.
  rows[0] = { ...rows[0]!, '3DSGLOBALSTATUS': 'OK' };
  rows[2] = { ...rows[2]!, EXECCODE: '0' };
  rows[8] = { ...rows[8]!, AMOUNT: '10.00', 'RULE APPLIED': 'partial refund' };
  return rows;
}

/**
 * A 205-byte zip64 archive whose zip64 end record puts the central directory of 1,000 bytes at 2^63 - 100: offset
 * plus size past 2^63, far past the end of the file. A reader that seeks there unchecked throws from inside its
 * own read callback.
 */
function directoryPastEndZip(): Buffer {
  const zip = Buffer.from(
    zipArchive([{ name: 'export.csv', data: Buffer.from('A;B\n1;2\n3;\n'), method: 'stored' }], {
      zip64: { extraFields: false },
    }),
  );
  const record = zip.length - 22 - 20 - 56;
  zip.writeBigUInt64LE(1000n, record + 40);
  zip.writeBigUInt64LE(2n ** 63n - 100n, record + 48);
  return zip;
}

/** Bytes after the last bzip2 stream, as tape padding or a careless concatenation leaves: bzip2 and lbzip2 ignore them. */
function trailingGarbageBzip2(): Buffer {
  const garbage = pseudoRandomBytes(100, 29);
  // Not the start of another stream ('BZh'), which the decoders would try to read.
  garbage[0] = 0x00;
  return Buffer.concat([bzip2(serviceCsv(eurRows(29, 6))), garbage]);
}

function fixtures(): Fixture[] {
  const reference = referenceRows();
  const multiMemberCsv = serviceCsv(eurRows(6, 9));
  const multiStreamCsv = serviceCsv(eurRows(9, 9));
  const oneEntryZip = zipArchive([{ name: 'export.csv', data: serviceCsv(eurRows(11, 6)), method: 'deflate' }]);
  const macJunk = pseudoRandomBytes(120, 7);
  const { content: badRows, badLines } = badRowsFile();
  const bomb = csvBomb();

  return [
    {
      file: 'semicolon-bom-crlf.csv',
      content: Buffer.from(
        csvText(ALL_COLUMNS, reference, { delimiter: ';', eol: '\r\n', bom: true, quoteAll: false }),
      ),
      exercises:
        'the reference good file: `;`, UTF-8 BOM, CRLF, quoted headers, `;` and `""` inside quotes, ' +
        'an embedded newline (row 4 spans lines 5-6), one JPY and one KWD row, DATE 2024-03-31 01:30:00',
      expect: loaded(10),
    },
    {
      file: 'newer-export.csv',
      content: serviceCsv(newerReferenceRows()),
      exercises:
        'a newer export of semicolon-bom-crlf.csv (same 10 TRANSACTIONIDs, `;`, LF, no BOM): 3 rows changed ' +
        '(A100001 3DSGLOBALSTATUS, A100003 EXECCODE 0003 -> 0, A100009 AMOUNT/RULE APPLIED). Ingested after it: ' +
        '3 updated, 7 unchanged',
      expect: loaded(10),
    },
    {
      file: 'comma-quoted.csv',
      content: Buffer.from(
        csvText(ALL_COLUMNS, eurRows(2, 8), { delimiter: ',', eol: '\n', bom: false, quoteAll: true }),
      ),
      exercises: '`,` delimiter, every value quoted, CLIENTADDRESS holds a `,`',
      expect: loaded(8),
    },
    {
      file: 'subset-reordered.csv',
      content: serviceCsv(eurRows(3, 5), ['TRANSACTIONID', 'CURRENCY', 'AMOUNT', 'EXECCODE', 'DATE', 'ORDERID']),
      exercises: 'a subset of the columns in another order (TRANSACTIONID first)',
      expect: loaded(5),
    },
    {
      file: 'extra-column.csv',
      content: serviceCsv(
        eurRows(4, 5).map((row, i) => ({ ...row, 'RISK SCORE': String(10 * (i + 1)) })),
        [...ALL_COLUMNS.slice(0, 9), 'RISK SCORE', ...ALL_COLUMNS.slice(9)],
      ),
      exercises: 'an unknown column `"RISK SCORE"` in the middle: kept in `extra`, values 10..50',
      expect: loaded(5),
    },
    {
      file: 'header-only.csv',
      content: Buffer.from(csvText(ALL_COLUMNS, [], SERVICE_STYLE)),
      exercises: 'a header and no rows',
      expect: loaded(0),
    },
    {
      file: 'single-member.csv.gz',
      content: gzip(serviceCsv(eurRows(5, 6))),
      exercises: 'gzip, one member',
      expect: loaded(6),
    },
    {
      file: 'multi-member.csv.gz',
      content: Buffer.concat(splitAt(multiMemberCsv, [700, 1400]).map(gzip)),
      exercises: 'gzip, three concatenated members cut mid-line (as pigz/parallel writers do); all 9 rows must be read',
      expect: loaded(9),
    },
    {
      file: 'gzip-named-csv.csv',
      content: gzip(serviceCsv(eurRows(7, 4))),
      exercises: 'gzip bytes under a `.csv` name: compression is detected from bytes, never the name',
      expect: loaded(4),
    },
    {
      file: 'single-stream.csv.bz2',
      content: bzip2(serviceCsv(eurRows(8, 6))),
      exercises: 'bzip2, one stream',
      expect: loaded(6),
    },
    {
      file: 'multi-stream.csv.bz2',
      content: Buffer.concat(splitAt(multiStreamCsv, [700, 1400]).map(bzip2)),
      exercises: 'bzip2, three concatenated streams cut mid-line (as pbzip2/lbzip2 write); all 9 rows must be read',
      expect: loaded(9),
    },
    {
      file: 'trailing-garbage.csv.bz2',
      content: trailingGarbageBzip2(),
      exercises:
        'bzip2, one stream followed by 100 bytes that are not another stream: ignored (with a warning) by ' +
        'bzip2, lbzip2 and the JavaScript decoder alike',
      expect: loaded(6),
    },
    {
      file: 'one-entry.zip',
      content: oneEntryZip,
      exercises: 'zip, one deflated entry `export.csv`',
      expect: loaded(6),
    },
    {
      file: 'two-entries.zip',
      content: zipArchive([
        { name: 'export/' },
        { name: 'export/part-1.csv', data: serviceCsv(eurRows(12, 4)), method: 'stored' },
        { name: 'export/part-2.csv', data: serviceCsv(eurRows(13, 5)), method: 'deflate' },
        { name: '__MACOSX/export/._part-1.csv', data: macJunk, method: 'stored' },
      ]),
      exercises:
        'zip, two csv entries (4 stored + 5 deflated rows) beside a directory entry and a __MACOSX entry, ' +
        'which are skipped',
      expect: loaded(9),
    },
    {
      file: 'data-descriptor.zip',
      content: zipArchive([
        { name: 'export.csv', data: serviceCsv(eurRows(14, 6)), method: 'deflate', dataDescriptor: true },
      ]),
      exercises:
        'zip entry written with a data descriptor (bit 3: zero crc and sizes in the local header, ' +
        'as streaming zippers write)',
      expect: loaded(6),
    },
    {
      file: 'zip64.zip',
      content: zipArchive([{ name: 'export.csv', data: serviceCsv(eurRows(30, 6)), method: 'deflate' }], {
        zip64: { extraFields: true },
      }),
      exercises:
        'zip64 form: sizes and local header offset in a zip64 extra field, a zip64 end record and locator, ' +
        'and an end record with saturated count, size and offset',
      expect: loaded(6),
    },
    {
      file: 'bad-rows.csv',
      content: badRows,
      exercises: `6 good rows and 7 bad ones, alternating: ${badLines.join('; ')}`,
      expect: loaded(13, 7),
    },
    {
      file: 'empty.csv',
      content: Buffer.alloc(0),
      exercises: 'a file of 0 bytes',
      expect: failed('FILE_EMPTY'),
    },
    {
      file: 'not-csv.bin',
      content: Buffer.concat([Buffer.from('\x7fELF'), pseudoRandomBytes(4_092, 3)]),
      exercises: 'binary data that is none of the archive formats',
      expect: failed('CSV_MALFORMED'),
    },
    {
      file: 'unclosed-quote.csv',
      content: Buffer.from(
        `${csvText(ALL_COLUMNS, eurRows(15, 2), SERVICE_STYLE)}` +
          csvText(ALL_COLUMNS, [{ ...eurRow(15, 3), CARDFULLNAME: 'X' }], SERVICE_STYLE)
            .split('\n')[1]!
            .replace(';X;', ';"Jean Dupont;') +
          '\n',
      ),
      exercises: 'a quote opened on line 4 and never closed',
      expect: failed('CSV_MALFORMED'),
    },
    {
      file: 'no-transactionid.csv',
      content: serviceCsv(
        eurRows(16, 3),
        ALL_COLUMNS.filter((column: Column) => column !== 'TRANSACTIONID'),
      ),
      exercises: 'a header without TRANSACTIONID',
      expect: failed('CSV_HEADER'),
    },
    {
      file: 'old-format.csv',
      content: Buffer.from(
        'IDENTIFIER;DATE;TRANSACTIONID;ORDERID;OPERATIONTYPE;AMOUNT;CURRENCY;BILLINGFEESTTC;EXECCODE\n' +
          'ACME-SHOP;2016-05-02 10:00:00;A1700001;ORD-2016-000001;payment;12390;EUR;25;0\n',
      ),
      exercises: 'the old export format (BILLINGFEESTTC, AMOUNT in cents): a header error, not a guess',
      expect: failed('CSV_HEADER'),
    },
    {
      file: 'truncated.csv.gz',
      content: gzip(serviceCsv(eurRows(18, 6))).subarray(0, 300),
      exercises: 'gzip cut after 300 bytes (no trailer)',
      expect: failed('ARCHIVE_CORRUPT'),
    },
    {
      file: 'truncated.csv.bz2',
      content: (() => {
        const whole = bzip2(serviceCsv(eurRows(19, 6)));
        return whole.subarray(0, Math.floor(whole.length * 0.6));
      })(),
      exercises: 'bzip2 cut at 60% of its bytes',
      expect: failed('ARCHIVE_CORRUPT'),
    },
    {
      file: 'corrupt.csv.bz2',
      content: corruptMiddle(bzip2(serviceCsv(eurRows(21, 6)))),
      exercises: 'bzip2 with 16 bytes flipped in the middle of the compressed data',
      expect: failed('ARCHIVE_CORRUPT'),
    },
    {
      file: 'corrupt.zip',
      content: (() => {
        const data = serviceCsv(eurRows(22, 6));
        const zip = zipArchive([{ name: 'export.csv', data, method: 'deflate' }]);
        // Flip bytes inside the deflated data only (after the 30-byte local header and the name).
        const start = 30 + 'export.csv'.length;
        const compressedLength = zip.readUInt32LE(18);
        const corrupted = Buffer.from(zip);
        for (let i = start + Math.floor(compressedLength / 2); i < start + Math.floor(compressedLength / 2) + 8; i++) {
          corrupted[i] = corrupted[i]! ^ 0xff;
        }
        return corrupted;
      })(),
      exercises: 'zip whose deflated entry data has 8 bytes flipped (bad data or crc mismatch)',
      expect: failed('ARCHIVE_CORRUPT'),
    },
    {
      file: 'truncated.zip',
      content: oneEntryZip.subarray(0, Math.floor(oneEntryZip.length * 0.6)),
      exercises: 'one-entry.zip cut at 60%: no central directory',
      expect: failed('ARCHIVE_CORRUPT'),
    },
    {
      file: 'encrypted.zip',
      content: zipArchive([
        { name: 'export.csv', data: serviceCsv(eurRows(23, 3)), method: 'deflate', password: 'secret' },
      ]),
      exercises: 'zip with a ZipCrypto-encrypted entry (as `zip -P secret` writes; the password is `secret`)',
      expect: failed('ARCHIVE_ENCRYPTED'),
    },
    {
      file: 'empty.zip',
      content: zipArchive([]),
      exercises: 'a zip with no entry at all (only the end of central directory record, `PK\\x05\\x06`)',
      expect: failed('ARCHIVE_EMPTY'),
    },
    {
      file: 'no-csv-entry.zip',
      content: zipArchive([
        { name: 'export/' },
        { name: '__MACOSX/export/._export.csv', data: macJunk, method: 'stored' },
      ]),
      exercises: 'a zip holding only a directory and a __MACOSX entry',
      expect: failed('ARCHIVE_EMPTY'),
    },
    {
      file: 'duplicate-entry.zip',
      content: zipArchive([
        { name: 'export.csv', data: serviceCsv(eurRows(27, 2)), method: 'deflate' },
        { name: 'export.csv', data: serviceCsv(eurRows(28, 3)), method: 'deflate' },
      ]),
      exercises:
        'two entries with the same name `export.csv` (an extractor would keep only one): refused rather ' +
        'than guessing which is the export',
      expect: failed('ARCHIVE_CORRUPT'),
    },
    {
      file: 'directory-past-end.zip',
      content: directoryPastEndZip(),
      exercises:
        '205 bytes whose zip64 end record puts the central directory at 2^63 - 100 (offset plus size past ' +
        '2^63): refused from the end records, before anything seeks there',
      expect: failed('ARCHIVE_CORRUPT'),
    },
    {
      file: 'bomb.zip',
      content: zipArchive([{ name: 'export.csv', data: bomb, method: 'deflate' }]),
      exercises:
        'zip bomb: a header, one row and 50 MiB of empty lines, deflated to about 50 KB (ratio about 1000); ' +
        'rejected from the sizes in its directory, before inflating',
      expect: failed('LIMIT_EXCEEDED'),
    },
    {
      file: 'bomb.csv.gz',
      content: gzip(bomb),
      exercises:
        'gzip bomb: the same 50 MiB in about 50 KB; rejected by the streaming byte count once the ratio ' +
        'passes the limit (about 10 MB in with the default ratio 200)',
      expect: failed('LIMIT_EXCEEDED'),
    },
  ];
}

function readme(list: readonly Fixture[]): string {
  const lines = [
    '# Export fixtures',
    '',
    'Written by `scripts/make-fixtures.ts` (`npm run fixtures`); do not edit by hand. Deterministic: rerunning the',
    'script gives the same bytes. Every file holds its own TRANSACTIONIDs (`A<series><5 digits>`), so the counts',
    'below hold on an empty database in any order, except `newer-export.csv`, which re-exports the transactions',
    'of `semicolon-bom-crlf.csv` on purpose.',
    '',
    'Columns: the "Exported transaction record" table of the spec; values as the service writes them',
    '(AMOUNT `123.90`, EXECCODE `0`, SCHEDULE `[1-3]`, DATE `YYYY-MM-DD hh:mm:ss`). Compression is detected',
    'from the bytes, never the file name. In zips, a csv entry is every entry that is not a directory, not',
    'under `__MACOSX/` and whose base name does not start with `.`.',
    '',
    'Expected `recon ingest` outcome per file (rows = data records, good = loaded, bad = rejected rows):',
    '',
    '| file | outcome | rows | good | bad | exercises |',
    '|---|---|---|---|---|---|',
  ];
  for (const fixture of list) {
    const e = fixture.expect;
    const cells = e.status === 'loaded' ? ['loaded', e.rows, e.good, e.bad] : [`failed \`${e.code}\``, '-', '-', '-'];
    lines.push(`| \`${fixture.file}\` | ${cells.join(' | ')} | ${fixture.exercises.replaceAll('|', '\\|')} |`);
  }
  lines.push('');
  return lines.join('\n');
}

function main(): void {
  const list = fixtures();
  mkdirSync(FIXTURES_DIR, { recursive: true });
  // Stale fixtures of an earlier version of this script would otherwise linger and be committed.
  for (const name of readdirSync(FIXTURES_DIR)) rmSync(path.join(FIXTURES_DIR, name), { recursive: true });
  for (const fixture of list) writeFileSync(path.join(FIXTURES_DIR, fixture.file), fixture.content);
  writeFileSync(path.join(FIXTURES_DIR, 'README.md'), readme(list));
  console.log(`wrote ${list.length} fixtures and README.md to ${path.relative(process.cwd(), FIXTURES_DIR) || '.'}`);
}

main();
