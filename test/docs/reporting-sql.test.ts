import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REPORTING_ROLES, grantReportingRoles } from '../../src/db/reporting-roles.ts';
import { packageRoot } from '../../src/package-root.ts';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { seedReporting } from '../reporting/reporting-seed.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { readText } from './markdown.ts';
import { reportingSqlBlocks, roleOfBlock } from './reporting-sql.ts';

const page = readText(path.join(packageRoot(), 'docs', 'reporting.md'));
const blocks = reportingSqlBlocks();

/**
 * The worked SQL of docs/reporting.md runs as written, on a migrated database holding a small history of runs,
 * files and verdicts. On PostgreSQL it runs as the accountants' role, recon_reader, which may read the views of
 * reporting and nothing else: a query that needs more would not work for the readers the page is written for. The
 * calls of reporting.exception_action run as recon_accountant, which may call it.
 */
describe.each(BACKENDS)('docs/reporting.md on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await seedReporting(testDb.database);
    // The accountants' role exists once the roles step has run, as every command start runs it.
    await grantReportingRoles(testDb.database, DEFAULT_REPORTING_ROLES);
  });
  afterAll(async () => testDb?.drop());

  it('has SQL examples', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
  });

  it.skipIf(skip).each(blocks.map((block) => [block.line, block.text]))(
    'runs the ```sql block of line %i',
    async (_line, text) => {
      await testDb.database.transaction(async (connection) => {
        // Acting on an exception takes the accountant's role; every other query runs as a reader.
        if (backend === 'postgres') await connection.query(`SET LOCAL ROLE ${roleOfBlock(text)}`);
        await connection.query(text);
      });
    },
  );

  it.skipIf(skip)('documents every view of reporting and every column of each', async () => {
    const { rows } = await testDb.database.transaction((connection) =>
      connection.query<{ table_name: string; column_name: string }>(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'reporting' ORDER BY table_name, ordinal_position",
      ),
    );
    const views = new Map<string, string[]>();
    for (const { table_name: view, column_name: column } of rows) views.set(view, [...(views.get(view) ?? []), column]);
    expect(views.size).toBeGreaterThanOrEqual(10);
    const missing: string[] = [];
    for (const [view, columns] of views) {
      const heading = `### \`reporting.${view}\``;
      const start = page.indexOf(`\n${heading}\n`);
      if (start < 0) {
        missing.push(`no section ${heading}`);
        continue;
      }
      const end = page.indexOf('\n#', start + heading.length + 2);
      const section = page.slice(start, end < 0 ? undefined : end);
      for (const column of columns)
        if (!section.includes(`\n| \`${column}\` |`)) missing.push(`reporting.${view}.${column}`);
      if (!page.includes(`| [\`reporting.${view}\`](#reporting${view}) |`))
        missing.push(`reporting.${view} in the table of views`);
    }
    expect(missing).toEqual([]);
  });
});

/**
 * The page's "7 days or more" question answers the day recon is installed: the first run sees every exception at
 * once, so an age counted from first_seen is 0 for all of them, orders weeks old included.
 */
describe.each(BACKENDS)("docs/reporting.md's ages on a first install, on %s", (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    const now = Date.now();
    await insertOrders(testDb.database, [
      { id: 'OLD', amount: 4000n, status: 'paid', createdAt: new Date(now - 10.5 * DAY) },
      { id: 'NEW', amount: 2000n, status: 'paid', createdAt: new Date(now - 2.5 * DAY) },
    ]);
    await reconcile(testDb.database, {
      scope: { kind: 'all' },
      asOf: new Date(now),
      toleranceMinor: 0n,
      graceHours: 24,
    });
    await grantReportingRoles(testDb.database, DEFAULT_REPORTING_ROLES);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('finds the exception whose order is 10 days old with the first query of its section', async () => {
    const lines = page.split('\n');
    const heading = lines.indexOf('### Which exceptions are open, and since when?') + 1;
    const question = blocks.find((block) => block.line > heading);
    expect(question?.text).toContain('>= 7');
    const { rows } = await testDb.database.transaction(async (connection) => {
      if (backend === 'postgres') await connection.query('SET LOCAL ROLE recon_reader');
      return connection.query<{ order_id: string }>(question!.text);
    });
    expect(rows.map((row) => row.order_id)).toEqual(['OLD']);
  });
});
