import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgressBar, formatProgressLine } from '../../src/report/progress-bar.ts';

function terminal(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY, columns: 100 });
  let written = '';
  stream.on('data', (chunk) => (written += chunk));
  return { stream, written: () => written };
}

describe('progress bar', () => {
  it('shows the file, the share of its bytes read, rows and rows/s', () => {
    const line = formatProgressLine({ file: 'big.csv.gz', bytesRead: 5 * 1024 * 1024, totalBytes: 20 * 1024 * 1024, rows: 50_000 }, 2, 100);
    expect(line).toBe('big.csv.gz [#####---------------]  25% 5.0/20.0 MB  50000 rows  25000 rows/s');
  });

  it('shortens a long file name from the left to fit the terminal', () => {
    const line = formatProgressLine({ file: '/very/long/path/'.repeat(8) + 'export.zip', bytesRead: 0, totalBytes: 1, rows: 0 }, 0, 80);
    expect(line.length).toBe(79);
    expect(line.startsWith('…')).toBe(true);
    expect(line).toContain('export.zip [');
  });

  it('draws nothing when stderr is not a terminal', async () => {
    const { stream, written } = terminal(false);
    const bar = createProgressBar(stream);
    bar.update({ file: 'a.csv', bytesRead: 1, totalBytes: 2, rows: 1 });
    bar.clear();
    await new Promise((resolve) => setImmediate(resolve));
    expect(written()).toBe('');
  });

  it('redraws at most every 100 ms on a terminal, and clears its line', async () => {
    const { stream, written } = terminal(true);
    let time = 0;
    const bar = createProgressBar(stream, () => time);
    for (let rows = 1; rows <= 10; rows++) {
      time += 30;
      bar.update({ file: 'a.csv', bytesRead: rows, totalBytes: 10, rows });
    }
    bar.clear();
    await new Promise((resolve) => setImmediate(resolve));
    const draws = written().split('\r').filter((part) => part.startsWith('a.csv'));
    expect(draws.length).toBe(3); // at 30 ms (first), 150 ms, 270 ms
    expect(written().endsWith('\r\x1b[K')).toBe(true);
  });
});
