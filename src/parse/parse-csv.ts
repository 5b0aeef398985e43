import type { Readable } from 'node:stream';
import { ReconError } from '../errors.ts';
import { detectDelimiter, type CsvDelimiter } from './csv-delimiter.ts';
import { CsvScanner, MAX_RECORD_CHARS, type CsvRecord } from './csv-scanner.ts';

export type { CsvRecord } from './csv-scanner.ts';

export interface ParsedCsv {
  readonly header: string[];
  readonly delimiter: CsvDelimiter;
  /** Data records in batches, in file order; iterate once. Breaking out early destroys the source. */
  readonly records: AsyncIterable<CsvRecord[]>;
}

/**
 * Records per yielded batch, at least (a batch ends with the chunk that fills it). Batches live across awaits, so
 * bigger ones survive young-generation GCs and cost memory, for no CPU saved (docs/benchmarks.md).
 */
const BATCH_RECORDS = 1000;

/**
 * Reads the header (detecting `;` or `,` from it) and returns the data records as an async iterable of
 * batches. The source is decoded as strict UTF-8 (a leading BOM is dropped): text in another encoding or
 * binary data is CSV_MALFORMED rather than silently mangled values. A record whose column count differs from
 * the header's is yielded as it is; judging it is the normalizer's job.
 */
export async function parseCsv(source: Readable, options: { label: string }): Promise<ParsedCsv> {
  const { label } = options;
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer | string, unknown>;
  const decoder = new Utf8Text(label);

  let text = '';
  let delimiter: CsvDelimiter | undefined;
  let ended = false;
  try {
    while (delimiter === undefined) {
      const next = await chunks.next();
      ended = next.done === true;
      text += next.done ? decoder.end() : decoder.decode(next.value, text, 1);
      delimiter = detectDelimiter(text, ended);
      if (delimiter === undefined && text.length > MAX_RECORD_CHARS) {
        throw new ReconError(
          'CSV_MALFORMED',
          `${label}: line 1: no line break in the first ${MAX_RECORD_CHARS} characters (not a csv file?)`,
        );
      }
    }
    const scanner = new CsvScanner(delimiter, label);
    const first: CsvRecord[] = [];
    scanner.push(text, first);
    if (ended) scanner.finish(first);
    while (first.length === 0 && !ended) {
      const next = await chunks.next();
      ended = next.done === true;
      if (next.done) {
        scanner.push(decoder.end(), first);
        scanner.finish(first);
      } else {
        scanner.push(decoder.decode(next.value, scanner.pending, scanner.line), first);
      }
    }
    const header = first.shift();
    if (header === undefined) throw new ReconError('CSV_HEADER', `${label}: no header line (the csv is empty)`);
    return {
      header: header.values,
      delimiter,
      records: batches(chunks, decoder, scanner, first, ended),
    };
  } catch (error) {
    await chunks.return?.();
    throw error;
  }
}

async function* batches(
  chunks: AsyncIterator<Buffer | string>,
  decoder: Utf8Text,
  scanner: CsvScanner,
  first: CsvRecord[],
  ended: boolean,
): AsyncGenerator<CsvRecord[]> {
  let batch = first;
  try {
    while (!ended) {
      if (batch.length >= BATCH_RECORDS) {
        yield batch;
        batch = [];
      }
      const next = await chunks.next();
      if (next.done === true) {
        ended = true;
        scanner.push(decoder.end(), batch);
        scanner.finish(batch);
      } else {
        scanner.push(decoder.decode(next.value, scanner.pending, scanner.line), batch);
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    if (!ended) await chunks.return?.();
  }
}

/**
 * Streaming, strict UTF-8 decoding. Errors name the line: the caller passes the undecoded context
 * (`pending` text starting at line `line`) so the line of the bad byte can be counted on failure only.
 */
class Utf8Text {
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  readonly #label: string;

  constructor(label: string) {
    this.#label = label;
  }

  decode(chunk: Buffer | string, pending: string, line: number): string {
    if (typeof chunk === 'string') return this.#checkNul(chunk, pending, line);
    let text: string;
    try {
      text = this.#decoder.decode(chunk, { stream: true });
    } catch (error) {
      const lenient = new TextDecoder('utf-8').decode(chunk);
      const at =
        line + countNewlines(pending) + countNewlines(lenient.slice(0, Math.max(0, lenient.indexOf('\uFFFD'))));
      throw new ReconError(
        'CSV_MALFORMED',
        `${this.#label}: line ${at}: not UTF-8 text (binary data or another encoding)`,
        {
          cause: error,
        },
      );
    }
    return this.#checkNul(text, pending, line);
  }

  end(): string {
    try {
      return this.#decoder.decode();
    } catch (error) {
      throw new ReconError('CSV_MALFORMED', `${this.#label}: the file ends inside a UTF-8 character`, { cause: error });
    }
  }

  /** NUL is valid UTF-8 but never text: binary data that happened to decode. */
  #checkNul(text: string, pending: string, line: number): string {
    const nul = text.indexOf('\0');
    if (nul === -1) return text;
    const at = line + countNewlines(pending) + countNewlines(text.slice(0, nul));
    throw new ReconError('CSV_MALFORMED', `${this.#label}: line ${at}: a NUL byte (binary data, not csv)`);
  }
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}
