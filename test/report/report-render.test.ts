import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { renderCsv } from '../../src/report/report-csv.ts';
import { renderHtml } from '../../src/report/report-html.ts';
import { renderJson } from '../../src/report/report-json.ts';
import { renderTable } from '../../src/report/report-table.ts';
import {
  AGE_BUCKETS,
  type AccountTotal,
  type OpenException,
  type RunReport,
  type SettlementDay,
  type StatusTotal,
} from '../../src/report/run-report.ts';

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
    timeZone: 'Europe/Paris',
    bridge: [
      { currency: 'EUR', orders: 4, unknownOrders: 1, expectedMinor: '10000', settledMinor: '-250' },
      { currency: 'JPY', orders: 1, unknownOrders: 0, expectedMinor: '1234567', settledMinor: '1234567' },
      { currency: 'KWD', orders: 1, unknownOrders: 0, expectedMinor: '1234', settledMinor: '0' },
    ],
    // EUR: -102.50 is a status_mismatch of +55.70 netted against missing payments of -158.20.
    statusTotals: [
      statusTotal('EUR', 'matched', 2, '5000', '5000'),
      statusTotal('EUR', 'missing_at_provider', 2, '15820', '0', '15820'),
      statusTotal('EUR', 'status_mismatch', 1, '-10820', '-5250', '5570'),
      // Authorized, never captured: nothing expected, nothing settled, no difference, and all of it at risk.
      statusTotal('EUR', 'capture_expired', 63, '0', '0', '472500', 2),
      statusTotal('JPY', 'matched', 1, '1234567', '1234567'),
      statusTotal('KWD', 'missing_at_provider', 1, '1234', '0', '1234'),
    ],
    accounts: ACCOUNTS,
    receivedToBridge: [],
    verdictWarnings: { verdicts: 0, warnings: 0, listed: [] },
    moneyMoved: {
      window: { from: '2026-11-10', to: '2026-11-20' },
      days: [
        settlementDay('2026-11-10', 'EUR', '10000', '2500', '299'),
        settlementDay('2026-11-10', 'KWD', '1234', '0', '12'),
        settlementDay('2026-11-12', 'JPY', '1500', '0', '45'),
        settlementDay('2026-11-19', 'EUR', '500', '1000', '15'),
      ],
    },
    ageing: [
      {
        status: 'missing_at_provider',
        acknowledged: false,
        currency: 'EUR',
        orderAgeBucket: '0-3 days',
        exceptions: 1,
        atRiskMinor: '4200',
        atRiskUnknown: 0,
      },
      {
        status: 'missing_at_provider',
        acknowledged: false,
        currency: 'EUR',
        orderAgeBucket: '8-30 days',
        exceptions: 2,
        atRiskMinor: '11620',
        atRiskUnknown: 0,
      },
      {
        status: 'missing_at_provider',
        acknowledged: false,
        currency: 'KWD',
        orderAgeBucket: 'over 30 days',
        exceptions: 1,
        atRiskMinor: '1234',
        atRiskUnknown: 0,
      },
      {
        status: 'unknown_order',
        acknowledged: false,
        currency: 'JPY',
        orderAgeBucket: 'no order',
        exceptions: 1,
        atRiskMinor: '500',
        atRiskUnknown: 1,
      },
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

/** Two named accounts (one hostile) and transactions that named none. */
const ACCOUNTS: readonly AccountTotal[] = [
  account('SHOP-INST', 'shop', 'EUR', '1031000', '500'),
  { ...account(SCRIPT_ID, FORMULA_ID, 'KWD', '1234', '0'), orders: 1, transactions: 1 },
  account(null, null, 'JPY', '1500', '2000'),
];

function account(
  identifier: string | null,
  accountGroup: string | null,
  currency: string,
  paidMinor: string,
  refundedMinor: string,
): AccountTotal {
  return {
    identifier,
    accountGroup,
    currency,
    orders: 3,
    transactions: 4,
    paidMinor,
    refundedMinor,
    settledMinor: (BigInt(paidMinor) - BigInt(refundedMinor)).toString(),
  };
}

function statusTotal(
  currency: string,
  status: StatusTotal['status'],
  verdicts: number,
  expectedMinor: string,
  settledMinor: string,
  atRiskMinor = '0',
  atRiskUnknown = 0,
): StatusTotal {
  return {
    currency,
    status,
    verdicts,
    expectedMinor,
    settledMinor,
    differenceMinor: (BigInt(settledMinor) - BigInt(expectedMinor)).toString(),
    atRiskMinor,
    atRiskUnknown,
  };
}

function settlementDay(
  day: string,
  currency: string,
  paidMinor: string,
  refundedMinor: string,
  feesMinor: string,
): SettlementDay {
  return {
    day,
    currency,
    transactions: 2,
    payments: 1,
    refunds: 1,
    paidMinor,
    refundedMinor,
    feesMinor,
    netMinor: (BigInt(paidMinor) - BigInt(refundedMinor) - BigInt(feesMinor)).toString(),
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
    atRiskMinor: '4200',
    orderAgeDays: 12,
    acknowledged: false,
    acknowledgedBy: null,
    acknowledgedLogin: null,
    acknowledgedAt: null,
    lastNote: null,
    lastNoteBy: null,
    lastNoteLogin: null,
    lastNoteAt: null,
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
    atRiskMinor: null,
    orderAgeDays: null,
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
  'h3',
  'br',
  'bdi',
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
  const page = renderHtml(report(), EXCEPTIONS.slice(0, 2), { generatedAt: GENERATED_AT, perGroup: 2 });

  it('escapes every value: hostile ids, reasons, warnings and transactions come out as text', () => {
    const tags = new Set([...page.matchAll(/<([a-zA-Z][\w-]*)/g)].map((match) => match[1]!.toLowerCase()));
    expect([...tags].filter((tag) => !HTML_TAGS.has(tag))).toEqual([]);
    expect([...page.matchAll(/<[^>]*\son\w+\s*=/gi)]).toEqual([]);
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('=HYPERLINK(&quot;http://evil.test&quot;,&quot;x&quot;)');
    expect(page).toContain('&lt;b onmouseover=alert(3)&gt;');
    expect(page).toContain('&lt;svg onload=alert(4)&gt;');
    expect(page).toContain('&quot;&gt;&lt;script&gt;alert(5)&lt;/script&gt;.zip!day.csv:3');
    expect(page).toContain('<li><bdi>&lt;u&gt;T9&lt;/u&gt;: export 0000 42.00, notification 0000 43.00</bdi></li>');
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
      /<td class="num">100\.00<\/td><td class="num">-2\.50<\/td>\s*<td class="num neg"><strong>-102\.50<\/strong><\/td>/,
    );
    expect(page).toContain('<td class="num">1,234,567</td>');
    expect(page).toContain('<td class="num neg"><strong>-1.234</strong></td>');
    expect(page.match(/<rect class="bar /g)).toHaveLength(4);
    expect(page).toContain('1 verdict has no date');
    expect(page).not.toContain('SUSPECT');
  });

  it('explains the difference by status with bars from a zero line on one scale per currency', () => {
    const eur = page.slice(
      page.indexOf('<tbody class="currency">'),
      page.indexOf('</tbody>', page.indexOf('<tbody class="currency">')),
    );
    // status_mismatch +55.70 and missing_at_provider -158.20: the total's -102.50 hides neither.
    expect(eur).toMatch(/status_mismatch<\/span><\/td><td class="num">1<\/td>[\s\S]*?<td class="num pos">55\.70<\/td>/);
    expect(eur).toMatch(
      /missing_at_provider<\/span><\/td><td class="num">2<\/td>[\s\S]*?<td class="num neg">-158\.20<\/td>/,
    );
    // The largest part is full length (100 px from the middle); the others in proportion; matched draws none.
    expect(eur).toContain('<rect class="short" x="0" y="3" height="12" width="100"/>');
    expect(eur).toContain('<rect class="over" x="100" y="3" height="12" width="35.2"/>');
    expect(eur).toContain('<rect class="short" x="35.3" y="3" height="12" width="64.7"/>');
    expect(eur.match(/<rect /g)).toHaveLength(3);
    // No difference, but money at risk: the cell beside the difference says so, marked.
    expect(eur).toMatch(
      /capture_expired<\/span><\/td><td class="num">63<\/td>\s*<td class="num">0\.00<\/td><td class="num">0\.00<\/td>\s*<td class="num ">0\.00<\/td><td class="num at-risk some">4,725\.00<br><span class="muted">\+2 unknown<\/span><\/td>/,
    );
    expect(eur).toMatch(/<strong>-102\.50<\/strong><\/td><td class="num at-risk some">4,938\.90<br>/);
    expect(eur).toMatch(/matched<\/span>[\s\S]*?<td class="num at-risk">0\.00<\/td>/);
  });

  it('shows money moved per currency and per day in the zone of the report, each currency in its units', () => {
    const money = page.slice(
      page.indexOf('<section id="money">'),
      page.indexOf('</section>', page.indexOf('<section id="money">')),
    );
    expect(money).toContain('<h2>Money moved 2026-11-10 to 2026-11-20</h2>');
    expect(money).toMatch(
      /<strong>EUR<\/strong><\/td><td class="num">4<\/td>\s*<td class="num">105\.00<\/td><td class="num">35\.00<\/td><td class="num">3\.14<\/td>\s*<td class="num pos"><strong>66\.86<\/strong>/,
    );
    expect(money).toMatch(
      /<strong>JPY<\/strong>[\s\S]*?<td class="num">1,500<\/td><td class="num">0<\/td><td class="num">45<\/td>/,
    );
    expect(money).toMatch(
      /<strong>KWD<\/strong>[\s\S]*?<td class="num">1\.234<\/td><td class="num">0\.000<\/td><td class="num">0\.012<\/td>/,
    );
    expect(page).toContain('<h2>Verdicts and money moved per day (Europe/Paris)</h2>');
    expect(page.match(/<svg class="money-chart"/g)).toHaveLength(3);
    expect(page).toContain('<title>2026-11-19: gross 5.00, refunds 10.00, fees 0.15, net -5.15 EUR</title>');
    expect(page).toContain('<rect class="net negative"');
    expect(page).toContain('<summary>Money moved per day (4 rows)</summary>');
  });

  it('ages the exceptions and groups them by status with their count and money, small groups open', () => {
    const ageing = page.slice(
      page.indexOf('<section id="ageing">'),
      page.indexOf('</section>', page.indexOf('<section id="ageing">')),
    );
    expect(ageing).toMatch(/<td class="num">2<br><span class="muted">116\.20<\/span><\/td>/);
    expect(ageing).toMatch(/<td class="num">1<br><span class="muted">1\.234<\/span><\/td>/);
    expect(ageing).toContain('+1 unknown');
    const groups = [
      ...page.matchAll(/<details class="group" data-status="([a-z_]+)"( open)?>\s*<summary>([\s\S]*?)<\/summary>/g),
    ];
    expect(groups.map((group) => [group[1], group[2] === ' open'])).toEqual([
      ['missing_at_provider', true],
      ['unknown_order', true],
    ]);
    expect(groups[0]![3]).toContain(
      '<strong class="count">4</strong> at risk <span class="money">158.20 EUR</span> · <span class="money">1.234 KWD</span>',
    );
    expect(page).toContain('Showing the 2 oldest of 4 (at most 2 per status).');
    expect(page).toContain('<td class="num">12 d</td>');
    expect(page).toContain('<th>First seen</th><th class="num">Order age</th>');
    expect(ageing).toContain(
      '<th class="num">8-30 days</th><th class="num">over 30 days</th><th class="num">no order</th>',
    );
    expect(page).toContain('<td class="num"><strong>42.00</strong></td>');
  });

  it('closes a large group, and says the exceptions it leaves out', () => {
    const many = Array.from({ length: 11 }, (_, i) => exception(`M-${i}`));
    const large = renderHtml(
      {
        ...report(),
        ageing: [
          {
            status: 'missing_at_provider',
            acknowledged: false,
            currency: 'EUR',
            orderAgeBucket: '0-3 days',
            exceptions: 250,
            atRiskMinor: '1050000',
            atRiskUnknown: 0,
          },
        ],
      },
      many,
      { generatedAt: GENERATED_AT, perGroup: 11 },
    );
    expect(large).toContain('<details class="group" data-status="missing_at_provider">');
    expect(large).toContain('Showing the 11 oldest of 250 (at most 11 per status).');
  });

  it('flags a suspect run in the title and a banner', () => {
    const suspect = renderHtml(
      report({ suspect: true, suspectReason: '3 orders in scope expect money but no transaction at all was found' }),
      [],
      { generatedAt: GENERATED_AT, perGroup: 2 },
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
    expect(rows).toContain('EUR,4,1,100.00,-2.50,-102.50,4938.90,2');
    expect(rows).toContain('JPY,1,0,1234567,1234567,0,0,0');
    expect(rows).toContain('KWD,1,0,1.234,0.000,-1.234,1.234,0');
    const exceptions = rows.slice(
      rows.indexOf(
        'order_id,known_order,status,lifecycle,first_seen_at,first_seen_run_id,currency,expected,settled,delta,at_risk,order_age_days,acknowledged,acknowledged_by,acknowledged_login,acknowledged_at,last_note,last_note_by,last_note_login,last_note_at,rule,reason,transactions,warnings,figures,conflicts',
      ) + 1,
    );
    expect(exceptions[0]).toBe(
      '<script>alert(1)</script>,yes,missing_at_provider,new,2026-11-20T12:00:00Z,7,EUR,42.00,0.00,-42.00,42.00,12,no,,,,,,,,missing_at_provider,' +
        `'=cmd|' /C calc'!A0 <b onmouseover=alert(3)>,` +
        `"<svg onload=alert(4)> payment 0002 42.00 EUR 2026-11-19 10:00 UTC (""><script>alert(5)</script>.zip!day.csv:3)",` +
        `'-2+3 <i>abandoned</i>,"expected=42.00; settled=0.00","<u>T9</u>: export 0000 42.00, notification 0000 43.00"`,
    );
    expect(exceptions[1]).toMatch(/^"'=HYPERLINK\(""http:\/\/evil\.test"",""x""\)",yes,/);
    // csv cells are data, not terminal output: the escape characters stay as they were.
    expect(exceptions[2]!.startsWith('U-\u001b[31mred\u001b[0m,no,unknown_order,new,')).toBe(true);
    expect(exceptions[2]).toContain(',JPY,0,500,500,,,no,,,,,,');
    expect(exceptions.slice(3)).toEqual(['']);
  });

  it("has sections for the difference by status, money moved and ageing, amounts in their currency's units", async () => {
    const rows = (await collect(renderCsv(report(), pages([], 2), { generatedAt: GENERATED_AT }))).split('\r\n');
    const sectionOf = (title: string) => {
      const start = rows.findIndex((row) => row.startsWith(title) || row.startsWith(`"${title}`));
      expect(start).toBeGreaterThan(0);
      return rows.slice(start + 1, rows.indexOf('', start));
    };
    expect(rows).toContain('report_timezone,Europe/Paris');
    expect(sectionOf('the difference by status')).toEqual([
      'currency,status,verdicts,expected,settled,difference,at_risk,at_risk_unknown',
      'EUR,matched,2,50.00,50.00,0.00,0.00,0',
      'EUR,status_mismatch,1,-108.20,-52.50,55.70,55.70,0',
      'EUR,capture_expired,63,0.00,0.00,0.00,4725.00,2',
      'EUR,missing_at_provider,2,158.20,0.00,-158.20,158.20,0',
      'JPY,matched,1,1234567,1234567,0,0,0',
      'KWD,missing_at_provider,1,1.234,0.000,-1.234,1.234,0',
    ]);
    expect(sectionOf('money moved per currency (2026-11-10 to 2026-11-20, Europe/Paris;')).toEqual([
      'currency,transactions,payments,refunds_count,gross,refunds,fees,net',
      'EUR,4,2,2,105.00,35.00,3.14,66.86',
      'JPY,2,1,1,1500,0,45,1455',
      'KWD,2,1,1,1.234,0.000,0.012,1.222',
    ]);
    expect(sectionOf('money moved per day')).toContain('2026-11-19,EUR,2,1,1,5.00,10.00,0.15,-5.15');
    const ageing = sectionOf('open exceptions by status and age of their order');
    expect(ageing).toEqual([
      'status,acknowledged,currency,order_age_bucket,exceptions,at_risk,at_risk_unknown',
      'missing_at_provider,no,EUR,0-3 days,1,42.00,0',
      'missing_at_provider,no,EUR,8-30 days,2,116.20,0',
      'missing_at_provider,no,KWD,over 30 days,1,1.234,0',
      'unknown_order,no,JPY,no order,1,500,1',
    ]);
    // A spreadsheet reads 4-7 as 4 July and 8-30 as 30 August: every bucket stays text.
    for (const bucket of AGE_BUCKETS) expect(bucket).not.toMatch(/^\d{1,2}[-/.]\d{1,2}$/);
    for (const row of ageing.slice(1)) expect(row.split(',')[3]).not.toMatch(/^\d{1,2}[-/.]\d{1,2}$/);
    // The list of exceptions says which age it holds.
    expect(rows.find((row) => row.startsWith('order_id,known_order,'))?.split(',')).toContain('order_age_days');
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
    expect(json.timeZone).toBe('Europe/Paris');
    expect(json.bridge[0]).toEqual({
      currency: 'EUR',
      exponent: 2,
      orders: 4,
      unknownOrders: 1,
      expectedMinor: '10000',
      settledMinor: '-250',
      differenceMinor: '-10250',
      atRiskMinor: '493890',
      atRiskUnknown: 2,
      byStatus: [
        {
          status: 'matched',
          verdicts: 2,
          expectedMinor: '5000',
          settledMinor: '5000',
          differenceMinor: '0',
          atRiskMinor: '0',
          atRiskUnknown: 0,
        },
        {
          status: 'status_mismatch',
          verdicts: 1,
          expectedMinor: '-10820',
          settledMinor: '-5250',
          differenceMinor: '5570',
          atRiskMinor: '5570',
          atRiskUnknown: 0,
        },
        {
          status: 'capture_expired',
          verdicts: 63,
          expectedMinor: '0',
          settledMinor: '0',
          differenceMinor: '0',
          atRiskMinor: '472500',
          atRiskUnknown: 2,
        },
        {
          status: 'missing_at_provider',
          verdicts: 2,
          expectedMinor: '15820',
          settledMinor: '0',
          differenceMinor: '-15820',
          atRiskMinor: '15820',
          atRiskUnknown: 0,
        },
      ],
    });
    expect(json.moneyMoved.window).toEqual({ from: '2026-11-10', to: '2026-11-20' });
    expect(json.moneyMoved.perCurrency).toEqual([
      {
        currency: 'EUR',
        exponent: 2,
        transactions: 4,
        payments: 2,
        refunds: 2,
        paidMinor: '10500',
        refundedMinor: '3500',
        feesMinor: '314',
        netMinor: '6686',
      },
      {
        currency: 'JPY',
        exponent: 0,
        transactions: 2,
        payments: 1,
        refunds: 1,
        paidMinor: '1500',
        refundedMinor: '0',
        feesMinor: '45',
        netMinor: '1455',
      },
      {
        currency: 'KWD',
        exponent: 3,
        transactions: 2,
        payments: 1,
        refunds: 1,
        paidMinor: '1234',
        refundedMinor: '0',
        feesMinor: '12',
        netMinor: '1222',
      },
    ]);
    expect(json.moneyMoved.perDay).toHaveLength(4);
    expect(json.moneyMoved.perDay[3]).toMatchObject({
      day: '2026-11-19',
      currency: 'EUR',
      exponent: 2,
      netMinor: '-515',
    });
    expect(json.ageing[3]).toEqual({
      status: 'unknown_order',
      acknowledged: false,
      currency: 'JPY',
      exponent: 0,
      orderAgeBucket: 'no order',
      exceptions: 1,
      atRiskMinor: '500',
      atRiskUnknown: 1,
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
      exponent: 2,
      expectedMinor: '4200',
      deltaMinor: '-4200',
      atRiskMinor: '4200',
      orderAgeDays: 12,
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
    expect(text).toMatch(/JPY\s+1\s+0\s+1,234,567\s+1,234,567\s+0\s+0\n/);
    expect(text).toMatch(/EUR\s+4\s+1\s+100\.00\s+-2\.50\s+-102\.50\s+4,938\.90 \(\+2 unknown\)\n/);
  });

  it("shows the difference by status, money moved, ageing and each exception's money at risk and age", () => {
    const text = renderTable(report(), EXCEPTIONS, { generatedAt: GENERATED_AT });
    expect(text).toMatch(/EUR\s+status_mismatch\s+1\s+-108\.20\s+-52\.50\s+55\.70\s+55\.70\n/);
    // 63 orders of no difference, whose authorized money is at risk all the same.
    expect(text).toMatch(/EUR\s+capture_expired\s+63\s+0\.00\s+0\.00\s+0\.00\s+4,725\.00 \(\+2 unknown\)\n/);
    expect(text).toContain('Money moved 2026-11-10 to 2026-11-20 (Europe/Paris)');
    expect(text).toMatch(/KWD\s+2\s+1\.234\s+0\.000\s+0\.012\s+1\.222\n/);
    expect(text).toMatch(/2026-11-19\s+EUR\s+2\s+5\.00\s+10\.00\s+0\.15\s+-5\.15\n/);
    expect(text).toMatch(/missing_at_provider\s+EUR\s+1 · 42\.00\s+2 · 116\.20\s+158\.20\n/);
    expect(text).toMatch(/unknown_order\s+JPY\s+1 · 500\s+500 \(\+1 unknown\)\n/);
    expect(text).toMatch(/12 d\s+EUR\s+42\.00\s+0\.00\s+-42\.00\s+42\.00/);
    // Each age says which it is: the order's, and the day recon first saw the exception.
    expect(text).toMatch(/\nstatus\s+currency\s+0-3 days\s+4-7 days\s+8-30 days\s+over 30 days\s+no order\s+at risk\n/);
    expect(text).toMatch(/\norder id\s+status\s+lifecycle\s+first seen\s+order age\s+currency\s/);
    expect(text).toMatch(/JPY\s+0\s+500\s+500\s+unknown/);
  });

  it('says how many exceptions it leaves out', () => {
    const text = renderTable(report(), EXCEPTIONS.slice(0, 1), { generatedAt: GENERATED_AT });
    expect(text).toContain('Open exceptions: 3, oldest first');
    expect(text).toContain('... and 2 more: `recon report --format csv` or `--format json` lists them all');
  });
});

describe('settled per account', () => {
  /** A merchant with one account whose exports name none: the section would only repeat the bridge's settled. */
  const single = (): RunReport => ({ ...report(), accounts: [account(null, null, 'EUR', '-250', '0')] });

  it("lists each account and currency in the table, in the currency's units, a missing account named so", () => {
    const text = renderTable(report(), [], { generatedAt: GENERATED_AT });
    expect(text).toContain(
      "Settled per account (succeeded transactions of the run's orders; settled = paid - refunded)",
    );
    expect(text).toMatch(/SHOP-INST\s+shop\s+EUR\s+3\s+4\s+10,310\.00\s+5\.00\s+10,305\.00\n/);
    expect(text).toMatch(
      /<script>alert\(1\)<\/script>\s+=HYPERLINK\("http:\/\/evil\.test","x"\)\s+KWD\s+1\s+1\s+1\.234\s+0\.000\s+1\.234\n/,
    );
    expect(text).toMatch(/\(no account\)\s+JPY\s+3\s+4\s+1,500\s+2,000\s+-500\n/);
    // Between the bridge and the money moved.
    expect(text.indexOf('Settled per account')).toBeGreaterThan(text.indexOf('Bridge per currency'));
    expect(text.indexOf('Settled per account')).toBeLessThan(text.indexOf('Money moved'));
    expect(renderTable(single(), [], { generatedAt: GENERATED_AT })).not.toContain('Settled per account');
  });

  it('shows a table of the accounts in the html, escaped, and none for a single unnamed account', () => {
    const page = renderHtml(report(), [], { generatedAt: GENERATED_AT, perGroup: 2 });
    const section = page.match(/<section id="accounts">[\s\S]*?<\/section>/)![0];
    expect(section).toContain('<h2>Settled per account</h2>');
    expect(section.match(/<tbody>[\s\S]*<\/tbody>/)![0].match(/<tr>/g)).toHaveLength(3);
    expect(section).toMatch(
      /<td><strong><bdi>SHOP-INST<\/bdi><\/strong><\/td><td><bdi>shop<\/bdi><\/td><td>EUR<\/td>\s*<td class="num">3<\/td><td class="num">4<\/td>\s*<td class="num">10,310\.00<\/td><td class="num">5\.00<\/td><td class="num pos"><strong>10,305\.00<\/strong><\/td>/,
    );
    expect(section).toContain(
      '<td><strong><bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi></strong></td><td><bdi>=HYPERLINK(&quot;http://evil.test&quot;,&quot;x&quot;)</bdi></td><td>KWD</td>',
    );
    expect(section).toContain('<td><strong><bdi>(no account)</bdi></strong></td><td></td><td>JPY</td>');
    expect(section).toContain('<td class="num neg"><strong>-500</strong></td>');
    expect(section).not.toMatch(/<script/i);
    expect(renderHtml(single(), [], { generatedAt: GENERATED_AT, perGroup: 2 })).not.toContain('id="accounts"');
  });

  it('has a csv section for every run, its cells neutralized, amounts plain in their units', async () => {
    const sectionOf = async (of: RunReport) => {
      const rows = (await collect(renderCsv(of, pages([], 2), { generatedAt: GENERATED_AT }))).split('\r\n');
      const start = rows.findIndex((row) => row.startsWith('"settled per account'));
      expect(start).toBeGreaterThan(0);
      return rows.slice(start + 1, rows.indexOf('', start));
    };
    expect(await sectionOf(report())).toEqual([
      'account,group,currency,orders,transactions,paid,refunded,settled',
      'SHOP-INST,shop,EUR,3,4,10310.00,5.00,10305.00',
      `<script>alert(1)</script>,"'=HYPERLINK(""http://evil.test"",""x"")",KWD,1,1,1.234,0.000,1.234`,
      '(no account),,JPY,3,4,1500,2000,-500',
    ]);
    expect(await sectionOf(single())).toEqual([
      'account,group,currency,orders,transactions,paid,refunded,settled',
      '(no account),,EUR,3,4,-2.50,0.00,-2.50',
    ]);
  });

  it('gives the json every account with amounts as strings of minor units, null for no account', async () => {
    const json = JSON.parse(await collect(renderJson(report(), pages([], 2), { generatedAt: GENERATED_AT })));
    expect(json.accounts).toEqual([
      {
        identifier: 'SHOP-INST',
        accountGroup: 'shop',
        currency: 'EUR',
        exponent: 2,
        orders: 3,
        transactions: 4,
        paidMinor: '1031000',
        refundedMinor: '500',
        settledMinor: '1030500',
      },
      {
        identifier: SCRIPT_ID,
        accountGroup: FORMULA_ID,
        currency: 'KWD',
        exponent: 3,
        orders: 1,
        transactions: 1,
        paidMinor: '1234',
        refundedMinor: '0',
        settledMinor: '1234',
      },
      {
        identifier: null,
        accountGroup: null,
        currency: 'JPY',
        exponent: 0,
        orders: 3,
        transactions: 4,
        paidMinor: '1500',
        refundedMinor: '2000',
        settledMinor: '-500',
      },
    ]);
    const alone = JSON.parse(await collect(renderJson(single(), pages([], 2), { generatedAt: GENERATED_AT })));
    expect(alone.accounts).toHaveLength(1);
  });
});

describe('acknowledged exceptions', () => {
  const acknowledgedAt = new Date('2026-11-20T09:15:00Z');
  const handled = exception('ACK-1', {
    lifecycle: 'persisting',
    acknowledged: true,
    acknowledgedBy: 'alice',
    acknowledgedLogin: 'alice',
    acknowledgedAt,
    lastNote: 'refund promised <b>by phone</b>',
    lastNoteBy: 'Alice Martin',
    lastNoteLogin: 'alice',
    lastNoteAt: acknowledgedAt,
  });
  const acknowledgedReport = (): RunReport => ({
    ...report(),
    ageing: [
      {
        status: 'missing_at_provider',
        acknowledged: false,
        currency: 'EUR',
        orderAgeBucket: '0-3 days',
        exceptions: 1,
        atRiskMinor: '4200',
        atRiskUnknown: 0,
      },
      {
        status: 'missing_at_provider',
        acknowledged: true,
        currency: 'EUR',
        orderAgeBucket: '8-30 days',
        exceptions: 1,
        atRiskMinor: '4200',
        atRiskUnknown: 0,
      },
    ],
  });

  it('shows them apart in the html page, closed, with who acknowledged them and the last note, escaped', () => {
    const page = renderHtml(acknowledgedReport(), [EXCEPTIONS[0]!, handled], {
      generatedAt: GENERATED_AT,
      perGroup: 5,
    });
    expect(page).toContain('<h3 id="new-exceptions">To look at (1)</h3>');
    expect(page).toContain('<h3 id="acknowledged-exceptions">Acknowledged (1)</h3>');
    const groups = [...page.matchAll(/<details class="group( acknowledged)?" data-status="([a-z_]+)"( open)?>/g)];
    expect(groups.map((group) => [group[2], group[1] !== undefined, group[3] !== undefined])).toEqual([
      ['missing_at_provider', false, true],
      ['missing_at_provider', true, false],
    ]);
    const acknowledgedGroup = page.slice(page.indexOf('<details class="group acknowledged"'));
    expect(acknowledgedGroup).toContain('<td class="id"><bdi>ACK-1</bdi></td>');
    expect(acknowledgedGroup).toContain(
      '<span class="badge acknowledged">acknowledged</span> by <bdi>alice</bdi>, 2026-11-20 09:15 UTC',
    );
    expect(acknowledgedGroup).toContain(
      '“<bdi>refund promised &lt;b&gt;by phone&lt;/b&gt;</bdi>” <span class="muted">— <bdi>Alice Martin</bdi> (login <bdi>alice</bdi>), 2026-11-20 09:15 UTC',
    );
    expect(page.slice(0, page.indexOf('<details class="group acknowledged"'))).not.toContain('ACK-1');
  });

  it('gives every format the acknowledgement and the last note', async () => {
    const csv = (
      await collect(renderCsv(acknowledgedReport(), pages([handled], 1), { generatedAt: GENERATED_AT }))
    ).split('\r\n');
    expect(csv).toContain('missing_at_provider,yes,EUR,8-30 days,1,42.00,0');
    expect(csv.find((row) => row.startsWith('ACK-1,'))).toContain(
      ',42.00,12,yes,alice,alice,2026-11-20T09:15:00Z,refund promised <b>by phone</b>,Alice Martin,alice,2026-11-20T09:15:00Z,',
    );
    const json = JSON.parse(
      await collect(renderJson(acknowledgedReport(), pages([handled], 1), { generatedAt: GENERATED_AT })),
    );
    expect(json.openExceptions.items[0]).toMatchObject({
      acknowledged: true,
      acknowledgedBy: 'alice',
      acknowledgedAt: '2026-11-20T09:15:00Z',
      lastNote: 'refund promised <b>by phone</b>',
    });
    expect(json.ageing[1]).toMatchObject({ acknowledged: true, exceptions: 1 });
    const text = renderTable(acknowledgedReport(), [handled], { generatedAt: GENERATED_AT });
    expect(text).toContain('Open exceptions: 3 (1 acknowledged), oldest first');
    expect(text).toMatch(/42\.00\s+yes\s+=cmd.*refund promised <b>by phone<\/b>/);
  });
});
