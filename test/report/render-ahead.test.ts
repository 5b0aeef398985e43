import { setImmediate } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { renderAhead } from '../../src/report/render-ahead.ts';
import { renderCsv } from '../../src/report/report-csv.ts';
import { renderJson } from '../../src/report/report-json.ts';
import type { OpenException, RunReport } from '../../src/report/run-report.ts';
import { collect, GENERATED_AT, morningReport, openException } from './morning-report-fixture.ts';

/** Pages of one item each, counting how many were taken and whether the reader was closed. */
function countedPages<T>(items: readonly T[]) {
  const seen = { taken: 0, closed: false };
  async function* pages() {
    try {
      for (const item of items) {
        seen.taken++;
        yield [item];
      }
    } finally {
      seen.closed = true;
    }
  }
  return { seen, pages: pages() };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await setImmediate();
}

const EXCEPTIONS: readonly OpenException[] = ['A-1', 'B-2', 'C-3', 'D-4'].map((id) => openException(id));

describe('rendering the open exceptions ahead of the summary', () => {
  it('renders pages before they are asked for, until the text waiting reaches its limit', async () => {
    const { seen, pages } = countedPages(['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee']);
    const rendered = renderAhead(pages, (page) => page.join(''), 10);
    await settle();
    // 4 + 4 characters are under the limit, the third page reaches it: the fourth waits for a reader.
    expect(seen.taken).toBe(3);
    expect(await collect(rendered)).toBe('aaaabbbbccccddddeeee');
    expect(seen.closed).toBe(true);
  });

  it('stops reading the pages when closed before the end', async () => {
    const { seen, pages } = countedPages(['aaaa', 'bbbb', 'cccc']);
    const rendered = renderAhead(pages, (page) => page.join(''), 4);
    await settle();
    await rendered.close();
    expect(seen).toEqual({ taken: 1, closed: true });
  });

  for (const [format, render] of [
    ['csv', renderCsv],
    ['json', renderJson],
  ] as const) {
    it(`${format}: renders every exception while the summary is computed, and writes what it writes after it`, async () => {
      let summaryDone: (report: RunReport) => void = () => {};
      const summary = new Promise<RunReport>((resolve) => (summaryDone = resolve));
      const { seen, pages } = countedPages(EXCEPTIONS);
      const text = collect(render(summary, pages, { generatedAt: GENERATED_AT }));
      await settle();
      expect(seen).toEqual({ taken: EXCEPTIONS.length, closed: true });
      summaryDone(morningReport());
      const ofReport = render(morningReport(), countedPages(EXCEPTIONS).pages, { generatedAt: GENERATED_AT });
      expect(await text).toBe(await collect(ofReport));
    });
  }

  it('fails as the summary does, and stops reading the pages', async () => {
    const { seen, pages } = countedPages(EXCEPTIONS);
    const summary = Promise.reject(new Error('the summary failed'));
    await expect(collect(renderCsv(summary, pages, { generatedAt: GENERATED_AT }))).rejects.toThrow(
      'the summary failed',
    );
    expect(seen.closed).toBe(true);
  });
});
