import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { renderCsv } from '../../src/report/report-csv.ts';
import { renderHtml } from '../../src/report/report-html.ts';
import { renderJson } from '../../src/report/report-json.ts';
import { renderTable } from '../../src/report/report-table.ts';
import type { OpenException, RunReport } from '../../src/report/run-report.ts';

/** The formats on a report built by hand: no database, every hostile value in every place a value can go. */
const SCRIPT_ID = '<script>alert(1)</script>';
const FORMULA_ID = '=HYPERLINK("http://evil.test","x")';
const GENERATED_AT = new Date('2026-11-20T13:00:00Z');

function report(overrides: Partial<RunReport['run']> = {}): RunReport {
  return {
    run: {
      runId: '7',
      kind: 'manual',
      description: 'all orders and unknown ORDERIDs',
      nightlyRunId: null,
      nightlyDate: null,
      choice: 'named',
      asOf: new Date('2026-11-20T12:00:00Z'),
      scope: { kind: 'all' },
      toleranceMinor: '0',
      graceHours: 24,
      startedAt: new Date('2026-11-20T12:00:01Z'),
      finishedAt: new Date('2026-11-20T12:00:03Z'),
      ordersInScope: 6,
      counts: { matched: 2, pending: 1, missing_at_provider: 2, unknown_order: 1 },
      notFound: [],
      notFoundCount: 0,
      suspect: false,
      suspectReason: null,
      prunedAt: null,
      ...overrides,
    },
    bridge: [
      { currency: 'EUR', orders: 4, unknownOrders: 1, expectedMinor: '10000', settledMinor: '-250' },
      { currency: 'JPY', orders: 1, unknownOrders: 0, expectedMinor: '1234567', settledMinor: '1234567' },
      { currency: 'KWD', orders: 1, unknownOrders: 0, expectedMinor: '1234', settledMinor: '0' },
    ],
    verdictGroups: [
      { day: '2026-11-10', status: 'matched', lifecycle: null, verdicts: 2 },
      { day: '2026-11-12', status: 'missing_at_provider', lifecycle: 'new', verdicts: 1 },
      { day: '2026-11-19', status: 'pending', lifecycle: null, verdicts: 1 },
      { day: '2026-11-19', status: 'missing_at_provider', lifecycle: 'persisting', verdicts: 1 },
      { day: null, status: 'unknown_order', lifecycle: 'new', verdicts: 1 },
    ],
  };
}

function exception(orderId: string, overrides: Partial<OpenException> = {}): OpenException {
  return {
    orderId,
    knownOrder: true,
    status: 'missing_at_provider',
    lifecycle: 'new',
    firstSeenRunId: '7',
    firstSeenAt: new Date('2026-11-20T12:00:00Z'),
    currency: 'EUR',
    expectedMinor: '4200',
    settledMinor: '0',
    deltaMinor: '-4200',
    explanation: {
      rule: 'missing_at_provider',
      reason: "=cmd|' /C calc'!A0 <b onmouseover=alert(3)>",
      transactions: [
        {
          transaction_id: '<svg onload=alert(4)>',
          operation_type: 'payment',
          exec_code: '0002',
          amount_minor: '4200',
          currency: 'EUR',
          occurred_at: '2026-11-19T10:00:00+00:00',
          source_file: '"><script>alert(5)</script>.zip',
          source_entry: 'day.csv',
          source_line: 3,
        },
      ],
      warnings: ['-2+3 <i>abandoned</i>'],
      figures: { expected: '4200', settled: '0', bogus: 1.5 },
      conflicts: [
        {
          transaction_id: '<u>T9</u>',
          export_exec_code: '0000',
          notified_exec_code: '0000',
          export_amount_minor: '4200',
          notified_amount_minor: '4300',
          notification_id: '1',
        },
      ],
    },
    ...overrides,
  };
}

const EXCEPTIONS = [
  exception(SCRIPT_ID),
  exception(FORMULA_ID, { lifecycle: 'persisting' }),
  exception('U-\u001b[31mred\u001b[0m', {
    knownOrder: false,
    status: 'unknown_order',
    currency: 'JPY',
    expectedMinor: '0',
    settledMinor: '500',
    deltaMinor: '500',
  }),
];

async function* pages<T>(items: readonly T[], size: number): AsyncGenerator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

async function collect(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return text;
}

const HTML_TAGS = new Set([
  'html',
  'head',
  'meta',
  'title',
  'style',
  'body',
  'main',
  'header',
  'div',
  'h1',
  'h2',
  'br',
  'span',
  'section',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
  'strong',
  'p',
  'code',
  'details',
  'summary',
  'ul',
  'li',
  'dl',
  'dt',
  'dd',
  'svg',
  'g',
  'title',
  'rect',
  'line',
  'text',
]);

describe('html report', () => {
  const page = renderHtml(report(), EXCEPTIONS.slice(0, 2), { generatedAt: GENERATED_AT });

  it('escapes every value: hostile ids, reasons, warnings and transactions come out as text', () => {
    const tags = new Set([...page.matchAll(/<([a-zA-Z][\w-]*)/g)].map((match) => match[1]!.toLowerCase()));
    expect([...tags].filter((tag) => !HTML_TAGS.has(tag))).toEqual([]);
    expect([...page.matchAll(/<[^>]*\son\w+\s*=/gi)]).toEqual([]);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('=HYPERLINK(&quot;http://evil.test&quot;,&quot;x&quot;)');
    expect(page).toContain('&lt;b onmouseover=alert(3)&gt;');
    expect(page).toContain('&lt;svg onload=alert(4)&gt;');
    expect(page).toContain('&quot;&gt;&lt;script&gt;alert(5)&lt;/script&gt;.zip!day.csv:3');
    expect(page).toContain('<li>&lt;u&gt;T9&lt;/u&gt;: export 0000 42.00, notification 0000 43.00</li>');
    expect(page).toContain('-2+3 &lt;i&gt;abandoned&lt;/i&gt;');
  });

  it('loads nothing: a CSP forbids every fetch and allows the inline stylesheet by its hash', () => {
    const style = page.match(/<style>([\s\S]*)<\/style>/)![1]!;
    const hash = createHash('sha256').update(style).digest('base64');
    expect(page).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;sha256-${hash}&#39;;`,
    );
    expect(page).not.toMatch(/\s(src|href|action|srcset)="/i);
    expect(page).not.toMatch(/@import|url\(/);
  });

  it("shows the totals, the bridge in each currency's units, the chart and how many exceptions are not listed", () => {
    expect(page).toContain('<title>Reconciliation run 7 · as of 2026-11-20 12:00 UTC</title>');
    expect(page).toMatch(
      /<td class="num">100\.00<\/td><td class="num">-2\.50<\/td>\s*<td class="num neg">-102\.50<\/td>/,
    );
    expect(page).toContain('<td class="num">1,234,567</td>');
    expect(page).toContain('<td class="num neg">-1.234</td>');
    expect(page.match(/<rect class="bar /g)).toHaveLength(4);
    expect(page).toContain('1 verdict has no date');
    expect(page).toContain('Showing the 2 oldest of 3');
    expect(page).not.toContain('SUSPECT');
  });

  it('flags a suspect run in the title and a banner', () => {
    const suspect = renderHtml(
      report({ suspect: true, suspectReason: '3 orders in scope expect money but no transaction at all was found' }),
      [],
      { generatedAt: GENERATED_AT },
    );
    expect(suspect).toContain('<title>SUSPECT · Reconciliation run 7');
    expect(suspect).toContain(
      '<div class="banner suspect" role="alert"><strong>SUSPECT RUN</strong>3 orders in scope expect money',
    );
  });
});

describe('csv report', () => {
  it('neutralizes formulas in every cell and quotes what needs quoting', async () => {
    const csv = await collect(renderCsv(report(), pages(EXCEPTIONS, 2), { generatedAt: GENERATED_AT }));
    expect(csv.startsWith('\uFEFFrecon reconciliation report,run 7\r\n')).toBe(true);
    const rows = csv.split('\r\n');
    expect(rows).toContain('EUR,4,1,100.00,-2.50,-102.50');
    expect(rows).toContain('JPY,1,0,1234567,1234567,0');
    expect(rows).toContain('KWD,1,0,1.234,0.000,-1.234');
    const exceptions = rows.slice(
      rows.indexOf(
        'order_id,known_order,status,lifecycle,first_seen_at,first_seen_run_id,currency,expected,settled,delta,rule,reason,transactions,warnings,figures,conflicts',
      ) + 1,
    );
    expect(exceptions[0]).toBe(
      '<script>alert(1)</script>,yes,missing_at_provider,new,2026-11-20T12:00:00Z,7,EUR,42.00,0.00,-42.00,missing_at_provider,' +
        `'=cmd|' /C calc'!A0 <b onmouseover=alert(3)>,` +
        `"<svg onload=alert(4)> payment 0002 42.00 EUR 2026-11-19 10:00 UTC (""><script>alert(5)</script>.zip!day.csv:3)",` +
        `'-2+3 <i>abandoned</i>,"expected=42.00; settled=0.00","<u>T9</u>: export 0000 42.00, notification 0000 43.00"`,
    );
    expect(exceptions[1]).toMatch(/^"'=HYPERLINK\(""http:\/\/evil\.test"",""x""\)",yes,/);
    // csv cells are data, not terminal output: the escape characters stay as they were.
    expect(exceptions[2]!.startsWith('U-\u001b[31mred\u001b[0m,no,unknown_order,new,')).toBe(true);
    expect(exceptions[2]).toContain(',JPY,0,500,500,');
    expect(exceptions.slice(3)).toEqual(['']);
  });

  it("puts a suspect run's warning before anything else", async () => {
    const csv = await collect(
      renderCsv(report({ suspect: true, suspectReason: 'no transaction at all' }), pages([], 2), {
        generatedAt: GENERATED_AT,
      }),
    );
    expect(csv.split('\r\n')[1]).toBe('WARNING,SUSPECT RUN: no transaction at all');
  });
});

describe('json report', () => {
  it('is one document with amounts as strings of minor units and every exception, page after page', async () => {
    const json = JSON.parse(
      await collect(
        renderJson(report({ suspect: true, suspectReason: 'empty' }), pages(EXCEPTIONS, 2), {
          generatedAt: GENERATED_AT,
        }),
      ),
    );
    expect(json.warnings).toEqual(['SUSPECT RUN: empty']);
    expect(json.run).toMatchObject({ runId: '7', asOf: '2026-11-20T12:00:00Z', suspect: true, toleranceMinor: '0' });
    expect(json.bridge[0]).toEqual({
      currency: 'EUR',
      exponent: 2,
      orders: 4,
      unknownOrders: 1,
      expectedMinor: '10000',
      settledMinor: '-250',
      differenceMinor: '-10250',
    });
    expect(json.bridge[2]).toMatchObject({ currency: 'KWD', exponent: 3 });
    expect(json.totals).toMatchObject({
      verdicts: 6,
      matched: 2,
      pending: 1,
      exceptions: 3,
      unknownOrders: 1,
      lifecycle: { new: 2, persisting: 1, resolved: 0 },
    });
    expect(json.undatedVerdicts).toBe(1);
    expect(json.openExceptions.total).toBe(3);
    expect(json.openExceptions.items.map((item: { orderId: string }) => item.orderId)).toEqual(
      EXCEPTIONS.map((e) => e.orderId),
    );
    expect(json.openExceptions.items[0]).toMatchObject({
      expectedMinor: '4200',
      deltaMinor: '-4200',
      explanation: EXCEPTIONS[0]!.explanation,
    });
  });

  it('stays valid with no exception at all', async () => {
    const json = JSON.parse(await collect(renderJson(report(), pages([], 2), { generatedAt: GENERATED_AT })));
    expect(json.openExceptions).toEqual({ total: 3, items: [] });
  });
});

describe('table report', () => {
  it('keeps control characters of the data away from the terminal and repeats warnings at the end', () => {
    const text = renderTable(report({ suspect: true, suspectReason: 'no transaction\nat all' }), EXCEPTIONS, {
      generatedAt: GENERATED_AT,
    });
    expect(text).not.toContain('\u001b');
    expect(text).toContain('U-\uFFFD[31mred\uFFFD[0m');
    const lines = text.trimEnd().split('\n');
    expect(lines[1]).toBe('!!! SUSPECT RUN: no transaction at all');
    expect(lines.at(-1)).toBe('!!! SUSPECT RUN: no transaction at all');
    expect(text).toMatch(/EUR\s+4\s+1\s+100\.00\s+-2\.50\s+-102\.50/);
    expect(text).toMatch(/JPY\s+1\s+0\s+1,234,567\s+1,234,567\s+0\n/);
  });

  it('says how many exceptions it leaves out', () => {
    const text = renderTable(report(), EXCEPTIONS.slice(0, 1), { generatedAt: GENERATED_AT });
    expect(text).toContain('Open exceptions: 3, oldest first');
    expect(text).toContain('... and 2 more: `recon report --format csv` or `--format json` lists them all');
  });
});
