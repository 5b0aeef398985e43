import { access, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { runRecon } from '../cli/run-recon.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { SCRIPT_ID, twoRuns, UNKNOWN_ID } from './report-scenario.ts';

/**
 * The html report in a real browser: Debian's chromium, driven by playwright-core. CI installs chromium
 * (.ci/run); without it this test fails rather than skips, so a missing browser cannot pass unnoticed.
 */
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = path.join(packageRoot(), 'test-artifacts', 'report.png');

describe('the html report in headless Chromium', () => {
  let testDb: TestDatabase;
  let tmp: string;
  let browser: Browser | undefined;
  let reportFile: string;
  beforeAll(async () => {
    await access(CHROMIUM).catch(() => {
      throw new Error(
        `${CHROMIUM} not found: install Debian's chromium package (apt-get install -y chromium) to test the html report`,
      );
    });
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-html-report-'));
    testDb = await createTestDatabase('pglite');
    await twoRuns(testDb.database, tmp);
    await testDb.close();
    reportFile = path.join(tmp, 'report.html');
    const result = await runRecon(['report', '--format', 'html', '--out', reportFile], testDb.env);
    expect(result).toEqual({ code: 0, stdout: `${reportFile}\n`, stderr: '' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('renders the totals, the difference by status, money moved, ageing and the grouped exceptions, logs no error and loads nothing but itself', async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    const errors: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('dialog', (dialog) => errors.push(`dialog: ${dialog.message()}`));
    const url = pathToFileURL(reportFile).href;
    await page.goto(url, { waitUntil: 'load' });

    expect(await page.title()).toBe('Reconciliation run 2 · as of 2026-11-20 12:00 UTC');
    expect(await page.locator('.card .value').allInnerTexts()).toEqual(['16', '10', '1', '5', '1']);
    const cells = async (rows: string) =>
      (await page.locator(rows).allInnerTexts()).map((row) =>
        row
          .split('\t')
          .map((cell) => cell.trim())
          .slice(0, 5),
      );
    // Each currency's bridge, then its difference by status: EUR's -98.00 is four parts, none hidden by another.
    expect(await cells('#bridge tr.total')).toEqual([
      ['EUR 11 orders, 1 unknown', '12', '893.00', '795.00', '-98.00'],
      ['JPY 2 orders, 0 unknown', '2', '3,500', '3,500', '0'],
      ['KWD 2 orders, 0 unknown', '2', '13.345', '14.345', '1.000'],
    ]);
    expect(await cells('#bridge tbody.currency:first-of-type tr.part')).toEqual([
      ['matched', '7', '700.00', '700.00', '0.00'],
      ['pending', '1', '50.00', '0.00', '-50.00'],
      ['amount_mismatch', '1', '100.00', '90.00', '-10.00'],
      ['missing_at_provider', '2', '43.00', '0.00', '-43.00'],
      ['unknown_order', '1', '0.00', '5.00', '5.00'],
    ]);
    // One bar per status with a difference, the largest (pending) as long as the total's scale allows, none for matched.
    const eurBars = page.locator('#bridge tbody.currency:first-of-type svg.difference-bar rect');
    expect(await eurBars.count()).toBe(5);
    for (const box of await Promise.all((await eurBars.all()).map((bar) => bar.boundingBox()))) {
      expect(box!.width).toBeGreaterThanOrEqual(1);
    }

    // Money moved on the run's days, gross -> refunds -> fees -> net, in each currency's units.
    expect(await page.locator('#money h2').innerText()).toBe('Money moved 2026-11-10 to 2026-11-20');
    expect(await cells('#money tbody tr')).toEqual([
      ['EUR', '9', '795.00', '0.00', '0.00'],
      ['JPY', '2', '3,500', '0', '0'],
      ['KWD', '3', '14.345', '0.000', '0.000'],
    ]);
    // A money chart per currency under the verdicts, its bars visible.
    expect(await page.locator('svg.money-chart').count()).toBe(3);
    for (const box of await Promise.all(
      (await page.locator('svg.money-chart rect.gross').all()).map((bar) => bar.boundingBox()),
    )) {
      expect(box!.height).toBeGreaterThan(0);
    }

    // The ageing: counts and money at risk per status and age of the order.
    expect(await cells('#ageing tbody tr')).toEqual([
      ['duplicate_payment', 'KWD', '1\n1.000', '·', '·'],
      ['amount_mismatch', 'EUR', '·', '·', '1\n10.00'],
      ['missing_at_provider', 'EUR', '2\n43.00', '·', '·'],
      ['unknown_order', 'EUR', '·', '·', '·'],
    ]);

    // The exceptions grouped by status, each group with its count and money, small groups open, and collapsible.
    const groups = page.locator('#exceptions details.group');
    expect(await groups.locator('> summary').allInnerTexts()).toEqual([
      'duplicate_payment 1 at risk 1.000 KWD',
      'amount_mismatch 1 at risk 10.00 EUR',
      'missing_at_provider 2 at risk 43.00 EUR',
      'unknown_order 1 at risk 5.00 EUR',
    ]);
    const firstGroup = groups.first();
    expect(await firstGroup.locator('tr.main').isVisible()).toBe(true);
    await firstGroup.locator('> summary').click();
    expect(await firstGroup.locator('tr.main').isVisible()).toBe(false);
    await firstGroup.locator('> summary').click();
    expect(await firstGroup.locator('tr.main').isVisible()).toBe(true);

    // Eleven days of orders, each with a bar of visible size.
    const bars = page.locator('svg.chart rect.bar');
    expect(await bars.count()).toBeGreaterThanOrEqual(11);
    for (const box of await Promise.all((await bars.all()).map((bar) => bar.boundingBox()))) {
      expect(box!.width).toBeGreaterThan(0);
      expect(box!.height).toBeGreaterThan(0);
    }
    expect(await page.locator('svg.chart rect.bar.exceptions').count()).toBeGreaterThan(0);

    // Hostile order ids show as text, and ran nothing.
    const orderIds = await page.locator('#exceptions td.id').allInnerTexts();
    expect(orderIds).toEqual(expect.arrayContaining([SCRIPT_ID, UNKNOWN_ID]));
    expect(await page.locator('script, img, iframe, link, object, embed').count()).toBe(0);

    await page.locator('#exceptions details.why').first().click();
    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    expect(errors).toEqual([]);
    expect(new Set(requests)).toEqual(new Set([url]));
    expect((await readFile(SCREENSHOT)).subarray(1, 4).toString()).toBe('PNG');
  });
});
