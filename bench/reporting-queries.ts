import type { CodeBlock } from '../test/docs/markdown.ts';
import { actsOnException, roleOfBlock } from '../test/docs/reporting-sql.ts';

/** What the page's examples name, replaced by what exists in the benchmark's database. */
export interface Samples {
  /** The latest finished run. */
  runId: number;
  /** An open exception of a known order, whose verdict has a history when one has. */
  orderId: string;
  /** The commonest exception status of the open exceptions, their commonest currency and account. */
  status: string;
  currency: string;
  identifier: string;
}

/** One statement an accountant runs, as bench:reporting times it. */
export interface ReportingQuery {
  /** `reporting.md:44 reporting.runs`, or the question in words. */
  name: string;
  sql: string;
  /** The role it runs as (SET LOCAL ROLE), as the accountants' logins would. */
  role: string;
  /** Statements run first in the same transaction, not timed: what the timed one needs to succeed. */
  before: string[];
  /** True when it writes: its transaction is rolled back, as every one is, but the table says so. */
  writes: boolean;
}

/** A string as an SQL literal: the accountant's SQL holds its values, and COPY (query) takes no parameters. */
export const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

/**
 * The page's examples run on the sandbox's seeded scenario: run 1, orders `'ORD-1-0007'` and `'UNK-0'`. On the
 * benchmark's database, a comparison of a run_id with a number compares with the latest run, and a quoted example
 * ORDERID (`'ORD-…'`, `'UNK-…'`) becomes the sample order. Nothing else is changed: dates and time zones run as written.
 */
export function substituteExamples(text: string, samples: Pick<Samples, 'runId' | 'orderId'>): string {
  return text
    .replace(/\b((?:\w+\.)?run_id)\s*=\s*\d+\b/g, `$1 = ${samples.runId}`)
    .replace(/'(?:ORD|UNK)-[\w-]*'/g, literal(samples.orderId));
}

/**
 * A run or an order the SQL names that is not a sample: what the substitution missed, should the page come to name
 * its examples otherwise (`run_id IN (1, 2)`, `order_id = 'A-1'`). Wider than the substitution, so that it can tell.
 */
export function exampleValuesLeft(text: string, samples: Pick<Samples, 'runId' | 'orderId'>): string[] {
  const runs = [...text.matchAll(/\brun_id\s*(?:=|IN\s*\()\s*(\d+)/gi)].filter((m) => Number(m[1]) !== samples.runId);
  const orders = [
    ...text.matchAll(/\border_id\s*(?:=>?|IN\s*\()\s*('(?:[^']|'')*')/gi),
    ...text.matchAll(/\bexception_action\(\s*('(?:[^']|'')*')/gi),
    ...text.matchAll(/('(?:ORD|UNK)-[\w-]*')/g),
  ].filter((m) => m[1] !== literal(samples.orderId));
  return [...runs, ...orders].map((m) => m[0]);
}

/** `reporting.md:44 reporting.runs`: where the block is, and the first view or function of reporting it names. */
export function blockName(block: Pick<CodeBlock, 'line' | 'text'>): string {
  const action = /reporting\.exception_action\(.*?'(ack|note|reopen)'/s.exec(block.text);
  const object = /\breporting\.\w+/.exec(block.text)?.[0];
  const what = action ? `exception_action ${action[1]}` : (object ?? block.text.trim().split('\n', 1)[0]!.slice(0, 60));
  return `reporting.md:${block.line} ${what}`;
}

/**
 * The ```sql blocks of docs/reporting.md as queries on the benchmark's database. A reopen withdraws an
 * acknowledgement: its transaction acknowledges the exception first, untimed.
 */
export function docsQueries(blocks: readonly CodeBlock[], samples: Samples): ReportingQuery[] {
  return blocks.map((block) => {
    const sql = substituteExamples(block.text, samples);
    const writes = actsOnException(block.text);
    const before =
      writes && /'reopen'/.test(block.text)
        ? [
            `SELECT reporting.exception_action(${literal(samples.orderId)}, 'ack', 'bench:reporting: acknowledged for the reopen')`,
          ]
        : [];
    return { name: blockName(block), sql, role: roleOfBlock(block.text), before, writes };
  });
}

/**
 * A single SELECT (or WITH) statement, without its semicolon: bench:reporting reads it through COPY (statement) TO
 * its output, run by the server as psql would run it, its rows counted and dropped, so that a million rows cost the
 * bench no memory. Anything else (a SET) is null: it runs as written.
 */
export function selectToCopy(sql: string): string | null {
  const statement = sql.trim().replace(/;\s*$/, '');
  if (!/^(select|with)\b/i.test(statement) || statement.includes(';')) return null;
  return statement;
}
