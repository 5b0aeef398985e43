import { access, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { runRecon } from '../cli/run-recon.ts';
import { HOUR } from '../reconcile/reconcile-scenario.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { MORNING, morningRun } from './morning-scenario.ts';

/**
 * The html report's layout in a real browser, Debian's chromium driven by playwright-core, at the widths accountants
 * read it at: the money first, before anything else; no card or table wider than its place, every group opened; and
 * an unclosed right-to-left override in a name or a note that turns round nothing after it. Without chromium this
 * fails rather than skips. The screenshots are kept in test-artifacts/.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(packageRoot(), 'test-artifacts');
const RLO = '\u202E';

/*
 * What runs in the page, as text: the project's types know Node, not the DOM.
 */
const OPEN_EVERY_DETAILS = `document.querySelectorAll('details').forEach((details) => { details.open = true; })`;

/** What is wider than the window, a card (a section, a card of counts, a group) or a table than its card. */
const OVERFLOWS = `(() => {
  const found = [];
  const name = (element) => element.tagName.toLowerCase() + (element.id ? '#' + element.id : '') +
    (element.className ? '.' + String(element.className).split(' ')[0] : '');
  if (document.documentElement.scrollWidth > window.innerWidth) {
    found.push('the page: ' + document.documentElement.scrollWidth + ' px in a window of ' + window.innerWidth);
  }
  for (const card of document.querySelectorAll('section, .card, details')) {
    if (card.scrollWidth > card.clientWidth + 1) found.push(name(card) + ': ' + card.scrollWidth + ' > ' + card.clientWidth);
  }
  for (const table of document.querySelectorAll('table')) {
    const card = table.closest('section');
    const inside = card.getBoundingClientRect().right - parseFloat(getComputedStyle(card).paddingRight);
    const right = table.getBoundingClientRect().right;
    if (right > inside + 1) found.push('a table of ' + name(card) + ': its right at ' + right + ', the inside at ' + inside);
  }
  return found;
})()`;

/**
 * For each text of the first acknowledged exception's note row outside its isolates that holds an instant ("), 2026-11-29 04:30 UTC"): whether its first
 * character is drawn left of its last, as left-to-right text is.
 */
const READING_DIRECTIONS = `(() => {
  const cell = document.querySelector('#exceptions details.group.acknowledged tr.note-row');
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  const found = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent || '';
    if (!/UTC/.test(text) || node.parentElement.closest('bdi')) continue;
    const start = text.search(/\\S/);
    const end = text.trimEnd().length;
    const first = document.createRange();
    first.setStart(node, start);
    first.setEnd(node, start + 1);
    const last = document.createRange();
    last.setStart(node, end - 1);
    last.setEnd(node, end);
    found.push({ text: text.trim(), leftToRight: first.getBoundingClientRect().left < last.getBoundingClientRect().left });
  }
  return found;
})()`;

describe('the html report laid out in headless Chromium', () => {
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
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-html-layout-'));
    testDb = await createTestDatabase('pglite');
    await morningRun(testDb.database, tmp);
    // Acknowledged before the next run, under a name and with a note that open an override and never close it.
    await sql`SELECT reporting.exception_action('C-1', 'ack', ${`${RLO}the shop captures it again`}, ${`${RLO}mallory`})`.execute(
      testDb.database.db,
    );
    await reconcile(testDb.database, {
      scope: { kind: 'all' },
      asOf: new Date(MORNING.getTime() + HOUR),
      toleranceMinor: 0n,
      graceHours: 24,
    });
    await testDb.close();
    reportFile = path.join(tmp, 'report.html');
    const result = await runRecon(['report', '--format', 'html', '--out', reportFile], {
      ...testDb.env,
      RECON_REPORT_TIMEZONE: 'Europe/Paris',
    });
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

  const open = async (width: number): Promise<Page> => {
    const page = await browser!.newPage({ viewport: { width, height: 900 } });
    await page.goto(pathToFileURL(reportFile).href, { waitUntil: 'load' });
    return page;
  };

  it.each([900, 1280])('at %i px shows the money first, and no card or table runs past its place', async (width) => {
    const page = await open(width);
    // The money first: the first section, in the first screen, above the cards and the bridge.
    const sections = await page.locator('main section').evaluateAll((all) => all.map((section) => section.id));
    expect(sections[0]).toBe('money-first');
    const top = (await page.locator('#money-first').boundingBox())!;
    expect(top.y).toBeLessThan(300);
    expect(top.y).toBeLessThan((await page.locator('.cards').boundingBox())!.y);
    expect(top.y).toBeLessThan((await page.locator('#bridge').boundingBox())!.y);
    expect(await page.locator('#money-first h2').isVisible()).toBe(true);
    expect(await page.locator('#money-first tr.last-day').first().innerText()).toMatch(/^—\s+Last day 2026-11-19/);

    // Every group and explanation opened, nothing may be wider than the window, a card or a table than its card.
    await page.evaluate(OPEN_EVERY_DETAILS);
    const overflows = await page.evaluate<string[]>(OVERFLOWS);
    expect(overflows).toEqual([]);
    expect(await page.locator('section').count()).toBeGreaterThanOrEqual(10);

    await mkdir(ARTIFACTS, { recursive: true });
    const file = path.join(ARTIFACTS, `report-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    expect((await readFile(file)).subarray(1, 4).toString()).toBe('PNG');
    await page.close();
  });

  it('isolates a name and a note with an unclosed right-to-left override: the rest of the audit line reads left to right', async () => {
    const page = await open(1280);
    const row = page.locator('#exceptions details.group.acknowledged tr.note-row').first();
    await page.evaluate(OPEN_EVERY_DETAILS);
    expect(await row.innerText()).toContain('mallory');
    // Each text after an isolated name or note, such as "), 2026-11-29 04:30 UTC": its first character left of its last.
    const directions = await page.evaluate<{ text: string; leftToRight: boolean }[]>(READING_DIRECTIONS);
    // The acknowledgement's line and the note's.
    expect(directions).toHaveLength(2);
    expect(directions.map((direction) => direction.leftToRight)).toEqual([true, true]);
    expect(directions[0]!.text).toMatch(/^\), \d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? UTC$/);
    await page.close();
  });
});
