import { describe, expect, it } from 'vitest';
import type { FileResult } from '../../src/ingest/file-result.ts';
import { formatFileJson, formatFileSummary } from '../../src/terminal/file-summary.ts';

const facts = { file: 'exports/a.csv.gz', sha256: 'ab'.repeat(32), sizeBytes: 1234, compression: 'gzip' as const };
const loaded: FileResult = {
  ...facts,
  status: 'loaded',
  fileId: '7',
  rows: 13,
  inserted: 4,
  updated: 1,
  unchanged: 1,
  outdated: 0,
  superseded: 0,
  rejected: 7,
};

describe('formatFileSummary', () => {
  it('prints one line per status', () => {
    expect(formatFileSummary(loaded)).toBe(
      'exports/a.csv.gz: loaded rows=13 inserted=4 updated=1 unchanged=1 rejected=7',
    );
    expect(formatFileSummary({ ...facts, status: 'duplicate', fileId: '3' })).toBe(
      'exports/a.csv.gz: duplicate of file 3, nothing changed',
    );
    expect(
      formatFileSummary({
        file: 'x.zip',
        status: 'failed',
        fileId: '9',
        errorCode: 'ARCHIVE_CORRUPT',
        error: 'x.zip: zip is truncated',
      }),
    ).toBe('x.zip: failed: zip is truncated');
    expect(
      formatFileSummary({
        file: 'x.zip',
        status: 'failed',
        fileId: '9',
        errorCode: 'ARCHIVE_CORRUPT',
        error: 'x.zip: entry a.csv: bad crc',
      }),
    ).toBe('x.zip: failed: entry a.csv: bad crc');
  });

  it('names superseded rows only when a file repeats a transaction id', () => {
    expect(formatFileSummary({ ...loaded, unchanged: 0, superseded: 1 })).toBe(
      'exports/a.csv.gz: loaded rows=13 inserted=4 updated=1 unchanged=0 superseded=1 rejected=7',
    );
  });
});

describe('formatFileJson', () => {
  it('has the same keys for every status, null where they do not apply', () => {
    const keys = Object.keys(JSON.parse(formatFileJson(loaded)));
    const failed = JSON.parse(
      formatFileJson({
        file: 'gone.csv',
        status: 'failed',
        fileId: null,
        errorCode: 'FILE_UNREADABLE',
        error: 'cannot read gone.csv: ENOENT',
      }),
    );
    expect(Object.keys(failed)).toEqual(keys);
    expect(failed).toMatchObject({
      status: 'failed',
      fileId: null,
      sha256: null,
      rows: null,
      errorCode: 'FILE_UNREADABLE',
    });
    expect(JSON.parse(formatFileJson(loaded))).toEqual({
      ...facts,
      status: 'loaded',
      fileId: '7',
      rows: 13,
      inserted: 4,
      updated: 1,
      unchanged: 1,
      outdated: 0,
      superseded: 0,
      rejected: 7,
      errorCode: null,
      error: null,
    });
  });
});
