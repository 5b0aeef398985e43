/**
 * recon's csv parsing against csv-parse, the parser the design named and the tests' oracle:
 * `node bench/csv-scanner.ts [rows]`. Not a test (speed is never asserted by tests); the measurement behind the
 * choice in docs/architecture.md, to run again when the scanner changes.
 *
 * Both read the same export (bench/generate-export.ts: every column, one address in twenty quoted with the
 * delimiter inside) from memory, in 64 KiB chunks as a file stream gives them, so that only decoding and parsing
 * are timed: recon's parse stage (parseCsv: strict UTF-8, the scanner, batches of records) and csv-parse's stream
 * with the options that read the text as the scanner does. They take turns, three rounds, each with a new parser;
 * the medians are compared in CPU seconds, which other processes on a shared machine do not inflate.
 */
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { parseCsv } from '../src/parse/parse-csv.ts';
import { exportRow, HEADER, mulberry32 } from './generate-export.ts';

const rows = Number(process.argv[2] ?? 1_000_000);
const CHUNK = 64 * 1024;
/** csv-parse reading the text as recon does: `"` quotes only at the start of a field, empty lines skipped. */
const CSV_PARSE_OPTIONS = { delimiter: ';', relax_quotes: true, skip_empty_lines: true, relax_column_count: true };

const random = mulberry32(42);
const lines = [HEADER];
for (let i = 0; i < rows; i++) lines.push(exportRow(i, random));
const bytes = Buffer.from(lines.join('\n') + '\n');
lines.length = 0;
const chunks = Array.from({ length: Math.ceil(bytes.length / CHUNK) }, (_, n) =>
  bytes.subarray(n * CHUNK, (n + 1) * CHUNK),
);

/** CPU seconds of one parse of the whole export, and the records it found (the header included). */
async function measure(parseAll: () => Promise<number>): Promise<{ cpu: number; records: number }> {
  const before = process.cpuUsage();
  const records = await parseAll();
  const used = process.cpuUsage(before);
  return { cpu: (used.user + used.system) / 1e6, records };
}

const recon = () =>
  measure(async () => {
    const parsed = await parseCsv(Readable.from(chunks), { label: 'bench' });
    let records = 1;
    for await (const batch of parsed.records) records += batch.length;
    return records;
  });

const csvParse = () =>
  measure(async () => {
    const parser = Readable.from(chunks).pipe(parse(CSV_PARSE_OPTIONS));
    let records = 0;
    parser.on('data', () => records++);
    await once(parser, 'end');
    return records;
  });

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ours: number[] = [];
const theirs: number[] = [];
for (let round = 0; round < 3; round++) {
  const a = await recon();
  const b = await csvParse();
  if (a.records !== b.records) throw new Error(`recon found ${a.records} records, csv-parse ${b.records}`);
  ours.push(a.cpu);
  theirs.push(b.cpu);
}
const seconds = (values: number[]) => values.map((s) => s.toFixed(2)).join(', ');
console.log(
  `${rows} rows (${(bytes.length / 1e6).toFixed(0)} MB): csv-parse ${median(theirs).toFixed(2)} s of CPU, ` +
    `recon's parse stage ${median(ours).toFixed(2)} s: ${(median(theirs) / median(ours)).toFixed(1)}x faster ` +
    `(rounds: csv-parse ${seconds(theirs)}; recon ${seconds(ours)})`,
);
