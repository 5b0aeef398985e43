import path from 'node:path';
import { DEFAULT_REPORTING_ROLES } from '../../src/db/reporting-roles.ts';
import { packageRoot } from '../../src/package-root.ts';
import { readMarkdown, readText, type CodeBlock } from './markdown.ts';

/**
 * The worked SQL of docs/reporting.md: its ```sql blocks, which test/docs runs on a small database and
 * bench:reporting times on a large one.
 */
export function reportingSqlBlocks(root = packageRoot()): CodeBlock[] {
  const page = readText(path.join(root, 'docs', 'reporting.md'));
  return readMarkdown(page).blocks.filter((block) => block.language === 'sql');
}

/** Whether a block acts on an exception (reporting.exception_action): it writes the audit trail. */
export const actsOnException = (text: string) => text.includes('reporting.exception_action(');

/** The role a block runs as: the accountants' to act on an exception, the readers' for everything else. */
export const roleOfBlock = (text: string) =>
  actsOnException(text) ? DEFAULT_REPORTING_ROLES.accountant : DEFAULT_REPORTING_ROLES.reader;
