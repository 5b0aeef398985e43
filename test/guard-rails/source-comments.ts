import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Folders never read: installed packages, build output, data. */
const SKIPPED = new Set(['node_modules', 'dist', 'coverage', 'fixtures', '.git', '.recon']);

/** Every file under `root` (paths relative to it), outside the skipped folders. */
export function repositoryFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(path.join(root, folder), { withFileTypes: true })) {
      if (SKIPPED.has(entry.name)) continue;
      const relative = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(relative);
      else files.push(relative);
    }
  };
  walk('');
  return files;
}

export interface SourceComment {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/**
 * The comments of a TypeScript or JavaScript file, found by TypeScript's parser: text in strings, templates and
 * regular expressions is code, not comment (a URL's `//`, a test's sample of a bad comment).
 */
export function commentsOf(file: string, source: string): SourceComment[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const ranges = new Map<number, ts.CommentRange>();
  const collect = (position: number) => {
    for (const range of ts.getLeadingCommentRanges(source, position) ?? []) ranges.set(range.pos, range);
    for (const range of ts.getTrailingCommentRanges(source, position) ?? []) ranges.set(range.pos, range);
  };
  const visit = (node: ts.Node) => {
    collect(node.pos);
    collect(node.end);
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  // A shebang is no comment.
  return [...ranges.values()]
    .filter((range) => !source.startsWith('#!', range.pos))
    .sort((a, b) => a.pos - b.pos)
    .map((range) => ({
      file,
      line: sourceFile.getLineAndCharacterOfPosition(range.pos).line + 1,
      text: source.slice(range.pos, range.end),
    }));
}

/** The comments of every .ts and .js file of the repository. */
export function repositoryComments(root: string): SourceComment[] {
  return repositoryFiles(root)
    .filter((file) => /\.[cm]?[jt]s$/.test(file))
    .flatMap((file) => commentsOf(file, readFileSync(path.join(root, file), 'utf8')));
}

/**
 * Names of recon's .ts and .js files a comment mentions, with or without a folder (`csv-scanner.ts`,
 * `cli/require-node.js`), by basename. Names with a capital (Node.js) are not file names.
 */
export function fileNamesIn(text: string): string[] {
  return [...text.matchAll(/(?<![\w.-])(?:[\w.-]+\/)*([a-z0-9][a-z0-9._-]*\.[jt]s)(?![\w-])/g)].map(
    (match) => match[1]!,
  );
}

/**
 * References to issues a reader of the code cannot open: the word issue followed by a number, or a number after a
 * bare hash sign. A reference into another project's public tracker names the project before its hash sign and
 * passes; so does an HTML entity.
 */
export function issueReferencesIn(text: string): string[] {
  return [...text.matchAll(/\bissues?\s*(?:#\s*)?\d+|(?<![\w/&.-])#\d+\b/gi)].map((match) => match[0]);
}
