import { formatRawRecord } from '../parse/format-raw-record.ts';
import { forEachEntry } from './export-entries.ts';
import type { ExportFile } from './export-file.ts';
import type { IngestOptions } from './ingest-options.ts';
import type { RawLines } from './stored-accounts.ts';

/**
 * The text of some records of a file, as a rejected row keeps it (formatRawRecord), read again from the file: for
 * rows rejected once staged (stored-accounts.ts), which the staging table keeps without their text. Reads up to
 * the last entry asked for, and stops there once its lines are found.
 */
export async function readRawLines(
  file: ExportFile,
  options: Pick<IngestOptions, 'limits'>,
  wanted: ReadonlyMap<number, ReadonlySet<number>>,
): Promise<RawLines> {
  const found = new Map<number, Map<number, string>>();
  const lastEntry = Math.max(...wanted.keys());
  await forEachEntry(file, options, async (entryIndex, parsed) => {
    const lines = wanted.get(entryIndex);
    const texts = new Map<number, string>();
    found.set(entryIndex, texts);
    for await (const batch of parsed.records) {
      if (!lines) continue;
      for (const record of batch)
        if (lines.has(record.line)) texts.set(record.line, formatRawRecord(record.values, parsed.delimiter));
      if (entryIndex === lastEntry && texts.size === lines.size) break;
    }
    return entryIndex === lastEntry ? 'stop' : undefined;
  });
  return found;
}
