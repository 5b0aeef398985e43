import type { ParsedCsv } from '../parse/parse-csv.ts';
import { openExport } from '../decompress/open-export.ts';
import { ReconError } from '../errors.ts';
import { parseCsv } from '../parse/parse-csv.ts';
import type { ExportFile } from './export-file.ts';
import { EntryError } from './ingest-failure.ts';
import type { IngestOptions } from './ingest-options.ts';

/**
 * Each csv entry of the file, parsed, in archive order, for the passes that read a file beside its load (its first
 * ids, its fingerprints, the text of some lines); errors name the entry as the load's own do. `visit` returns 'stop'
 * to read no further entry.
 */
export async function forEachEntry(
  file: ExportFile,
  options: Pick<IngestOptions, 'limits'>,
  visit: (entryIndex: number, parsed: ParsedCsv, label: string, bytesRead: () => number) => Promise<void | 'stop'>,
): Promise<void> {
  const opened = await openExport(file.path, options.limits, { name: file.name });
  let label = file.name;
  let entryIndex = 0;
  try {
    for await (const source of opened.entries) {
      label = source.label;
      const parsed = await parseCsv(await source.open(), { label });
      if ((await visit(entryIndex++, parsed, label, () => opened.bytesRead())) === 'stop') break;
    }
  } catch (error) {
    throw error instanceof ReconError ? error : new EntryError(label, error);
  } finally {
    await opened.close();
  }
}
