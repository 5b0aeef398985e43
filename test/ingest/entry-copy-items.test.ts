import { describe, expect, it } from 'vitest';
import type { CopyItem } from '../../src/ingest/copy-item.ts';
import { entryCopyItems, type EntryCopyOptions } from '../../src/ingest/entry-copy-items.ts';
import type { ChunkWay } from '../../src/ingest/load-plan.ts';
import { createRepeatedIdFilter } from '../../src/ingest/repeated-id-filter.ts';
import { createStagingRowEncoder, rowLineage } from '../../src/ingest/staging-row-encoder.ts';
import { planHeader } from '../../src/normalize/header-plan.ts';
import { createRecordNormalizer } from '../../src/normalize/record-normalizer.ts';
import type { ParsedCsv } from '../../src/parse/parse-csv.ts';

const HEADER = ['TRANSACTIONID', 'AMOUNT', 'CURRENCY'];

/** An entry of `amounts` (line 2 on, T1 on), in batches of two records, as the csv scanner would give them. */
function parsed(amounts: string[]): ParsedCsv {
  const records = amounts.map((amount, i) => ({ line: i + 2, values: [`T${i + 1}`, amount, 'EUR'] }));
  return {
    header: HEADER,
    delimiter: ';',
    records: (async function* () {
      for (let i = 0; i < records.length; i += 2) yield records.slice(i, i + 2);
    })(),
  };
}

function options(overrides: Partial<EntryCopyOptions>): EntryCopyOptions {
  const plan = planHeader(HEADER, 'entry.csv');
  const entry = { name: null, columns: plan.presentColumns.filter((c) => c !== 'transaction_id'), withExtra: false };
  return {
    normalize: createRecordNormalizer(plan, { timezone: 'UTC' }),
    encoder: createStagingRowEncoder(0, entry, { ids: createRepeatedIdFilter(), acceptedByEntry: [] }, 7),
    lineage: rowLineage('42', null),
    chunkRows: Number.POSITIVE_INFINITY,
    recordsInOpenChunk: 0,
    firstWay: 'staged',
    wayOfNextChunk: () => 'staged',
    lines: undefined,
    signal: undefined,
    onRecordsRead: undefined,
    ...overrides,
  };
}

/** The id of a COPY line: first in a straight line, after the entry index and line in a staging one; none if rejected. */
function idOf(line: string): string {
  const values = line.split('\t');
  const id = values[0]!.startsWith('T') ? values[0]! : values[2]!;
  return id === '\\N' ? 'rejected' : id;
}

/** The items, with each text as the ids of its lines. */
async function items(source: AsyncIterable<CopyItem>) {
  const seen: unknown[] = [];
  for await (const item of source) {
    if (item.kind === 'rows' || item.kind === 'rejected') {
      const text = item.kind === 'rows' ? item.text.toString() : item.text;
      const ids = text.trimEnd().split('\n').map(idOf);
      seen.push({ kind: item.kind, ids, ...(item.kind === 'rows' ? { lines: item.lines } : {}) });
    } else {
      seen.push(item);
    }
  }
  return seen;
}

describe('entryCopyItems', () => {
  it('gives an entry loaded whole as rows, then its end with what it read', async () => {
    expect(await items(entryCopyItems(parsed(['1.00', 'bad', '3.00']), options({})))).toEqual([
      { kind: 'rows', ids: ['T1', 'rejected', 'T3'], lines: 3 },
      { kind: 'entry-end', records: 3, rejected: 1, recordsInOpenChunk: 3 },
    ]);
  });

  it('ends a chunk every chunkRows records, counting from where the entry before left the open chunk', async () => {
    const source = entryCopyItems(
      parsed(['1.00', '2.00', '3.00', '4.00']),
      options({ chunkRows: 3, recordsInOpenChunk: 2 }),
    );
    expect(await items(source)).toEqual([
      { kind: 'rows', ids: ['T1'], lines: 1 },
      { kind: 'chunk-end', nextWay: 'staged' },
      { kind: 'rows', ids: ['T2', 'T3', 'T4'], lines: 3 },
      { kind: 'chunk-end', nextWay: 'staged' },
      { kind: 'entry-end', records: 4, rejected: 0, recordsInOpenChunk: 0 },
    ]);
  });

  it('asks the way of each chunk as it starts, and keeps a straight chunk’s rejected rows apart', async () => {
    const ways: ChunkWay[] = ['straight-into-table', 'staged'];
    const source = entryCopyItems(
      parsed(['1.00', 'bad', '3.00', '4.00', 'bad']),
      options({ chunkRows: 2, wayOfNextChunk: () => ways.shift()! }),
    );
    expect(await items(source)).toEqual([
      { kind: 'rows', ids: ['T1', 'rejected'], lines: 2 },
      { kind: 'chunk-end', nextWay: 'straight-into-table' },
      { kind: 'rows', ids: ['T3', 'T4'], lines: 2 },
      { kind: 'chunk-end', nextWay: 'staged' },
      { kind: 'rows', ids: ['rejected'], lines: 1 },
      { kind: 'entry-end', records: 5, rejected: 2, recordsInOpenChunk: 1 },
    ]);
    const straight = entryCopyItems(parsed(['1.00', 'bad']), options({ firstWay: 'straight-into-table' }));
    const all = await items(straight);
    expect(all).toEqual([
      { kind: 'rows', ids: ['T1'], lines: 1 },
      { kind: 'rejected', ids: ['rejected'] },
      { kind: 'entry-end', records: 2, rejected: 1, recordsInOpenChunk: 2 },
    ]);
  });

  it('loads only the lines asked for, still counting every record read', async () => {
    const read: number[] = [];
    const source = entryCopyItems(
      parsed(['1.00', '2.00', '3.00']),
      options({ lines: new Set([3]), onRecordsRead: (records) => read.push(records) }),
    );
    expect(await items(source)).toEqual([
      { kind: 'rows', ids: ['T2'], lines: 1 },
      { kind: 'entry-end', records: 3, rejected: 0, recordsInOpenChunk: 1 },
    ]);
    expect(read).toEqual([2, 3]);
  });
});
