import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgressBar, formatProgressLine, type IngestProgress } from '../../src/terminal/progress-bar.ts';

const MB = 1024 * 1024;

function terminal(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY, columns: 100 });
  let written = '';
  stream.on('data', (chunk) => (written += chunk));
  return { stream, written: () => written };
}

const progress = (values: Partial<IngestProgress>): IngestProgress => ({
  file: 'a.csv',
  phase: 'reading',
  fileBytes: 10,
  bytesRead: 0,
  rows: 0,
  ...values,
});

describe('progress line', () => {
  it('shows a plain file as a share of its bytes, with rows and rows/s', () => {
    const line = formatProgressLine(
      progress({ file: 'big.csv', fileBytes: 20 * MB, bytesRead: 5 * MB, rows: 50_000 }),
      2,
      100,
    );
    expect(line).toBe('big.csv [###-------]  25% 5.0/20.0 MB  50000 rows  25000 rows/s');
    const checking = formatProgressLine(
      progress({ file: 'big.csv', phase: 'checking', fileBytes: 20 * MB, bytesRead: 5 * MB, rows: 50_000 }),
      2,
      100,
    );
    expect(checking).toBe(
      'big.csv [###-------]  25% 5.0/20.0 MB  50000 rows checked against recon.transactions  25000 rows/s',
    );
  });

  it('shows a compressed file as the share of its compressed bytes read', () => {
    const line = formatProgressLine(
      progress({ file: 'big.csv.gz', fileBytes: 4 * MB, bytesRead: 3 * MB, rows: 9 }),
      3,
      100,
    );
    expect(line).toBe('big.csv.gz [########--]  75% 3.0/4.0 MB  9 rows  3 rows/s');
  });

  it('gives no rate on the first draw of a file, when no time has passed', () => {
    expect(formatProgressLine(progress({ bytesRead: 1, rows: 1141 }), 0, 100)).toBe(
      'a.csv [#---------]  10% 0.0/0.0 MB  1141 rows',
    );
  });

  it('keeps the end of a long path and every figure on a terminal of 80 columns', () => {
    const file = 'bench/.work/export-1000000.csv.gz';
    const reading = formatProgressLine(
      progress({ file, fileBytes: 20.8 * MB, bytesRead: 14.3 * MB, rows: 669_485 }),
      6.6,
      80,
    );
    expect(reading).toBe('…port-1000000.csv.gz [#######---]  68% 14.3/20.8 MB  669485 rows  101437 rows/s');
    const merging = formatProgressLine(
      progress({ file, phase: 'merging', fileBytes: 20.8 * MB, bytesRead: 20.8 * MB, rows: 1_000_000 }),
      9,
      80,
    );
    expect(merging).toBe('….work/export-1000000.csv.gz 1000000 rows read, merging into recon.transactions');
  });

  it('says when the rows are being merged, which is one long statement without progress of its own', () => {
    const line = formatProgressLine(progress({ phase: 'merging', fileBytes: MB, bytesRead: MB, rows: 1000 }), 3, 100);
    expect(line).toBe('a.csv 1000 rows read, merging into recon.transactions');
  });

  it('shortens a long file name from the left to fit the terminal', () => {
    const line = formatProgressLine(progress({ file: '/very/long/path/'.repeat(8) + 'export.csv' }), 0, 80);
    expect(line.length).toBe(79);
    expect(line.startsWith('…')).toBe(true);
    expect(line).toContain('export.csv [');
  });
});

describe('progress bar', () => {
  it('does not exist when stderr is not a terminal', () => {
    expect(createProgressBar(terminal(false).stream)).toBeUndefined();
  });

  it('redraws at most every 100 ms on a terminal, and clears its line', async () => {
    const { stream, written } = terminal(true);
    let time = 0;
    const bar = createProgressBar(stream, () => time)!;
    for (let rows = 1; rows <= 10; rows++) {
      time += 30;
      bar.update(progress({ bytesRead: rows, rows }));
    }
    bar.update(progress({ phase: 'merging', bytesRead: 10, rows: 10 }));
    bar.clear();
    await new Promise((resolve) => setImmediate(resolve));
    const draws = written()
      .split('\r')
      .filter((part) => part.startsWith('a.csv'));
    expect(draws.length).toBe(4); // at 30 ms (the first), 150 ms, 270 ms, and the switch to merging at once
    expect(draws[3]).toContain('merging');
    expect(written().endsWith('\r\x1b[K')).toBe(true);
  });
});
