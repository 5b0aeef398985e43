import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { openExport } from '../../src/decompress/open-export.ts';
import { isReconError } from '../../src/errors.ts';
import { parseCsv } from '../../src/parse/parse-csv.ts';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures');
const LIMITS = loadConfig({}).limits;

/** Rows of the README table: `| \`file\` | loaded | rows | ...` or `| \`file\` | failed \`CODE\` | ...`. */
const table = readFileSync(path.join(FIXTURES, 'README.md'), 'utf8')
  .split('\n')
  .map((line) => /^\| `([^`]+)` \| (loaded|failed `([A-Z_]+)`) \| ([-\d]+) \|/.exec(line))
  .filter((match) => match !== null)
  .map((match) => ({ file: match[1]!, code: match[3], rows: Number(match[4]) }));

/** Decompresses and parses every csv entry: the record count, or the error code. */
async function decompressAndParse(file: string): Promise<{ rows: number } | { code: string }> {
  try {
    const opened = await openExport(path.join(FIXTURES, file), LIMITS);
    let rows = 0;
    for await (const entry of opened.entries) {
      const parsed = await parseCsv(await entry.open(), { label: entry.label });
      for await (const batch of parsed.records) rows += batch.length;
    }
    return { rows };
  } catch (error) {
    if (isReconError(error)) return { code: error.code };
    throw error;
  }
}

describe('the fixtures README', () => {
  it('lists every fixture', () => {
    expect(table.length).toBeGreaterThanOrEqual(30);
  });

  // CSV_HEADER files are bad only to the normalizer's header plan; up to parsing they read fine.
  it.each(table.filter((row) => row.code !== 'CSV_HEADER'))(
    '$file decompresses and parses as the README says',
    async (row) => {
      const result = await decompressAndParse(row.file);
      expect(result).toEqual(row.code === undefined ? { rows: row.rows } : { code: row.code });
    },
  );
});
