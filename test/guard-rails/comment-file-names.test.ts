import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { commentsOf, fileNamesIn, repositoryComments, repositoryFiles } from './source-comments.ts';

/** A comment that names a file sends the reader to it: the file must exist (by basename, anywhere in the repo). */
describe('file names in comments', () => {
  it('finds the names a comment gives, with or without a folder, and nothing else', () => {
    const [comment] = commentsOf(
      'probe.ts',
      "const url = 'http://x/a.ts';\n// read by csv-scanner.ts and cli/require-node.js, not by Node.js or index.d\n",
    );
    expect(fileNamesIn(comment!.text)).toEqual(['csv-scanner.ts', 'require-node.js']);
  });

  it('reads comments only: a name in a string or a template is code', () => {
    const source = [
      '#!/usr/bin/env node',
      "const a = 'gone.ts'; // kept.ts",
      'const b = `// not-a-comment.ts ${a}`;',
      'function f() {',
      '  /* inner.ts */',
      '  return b; /** trailing.ts */',
      '}',
    ].join('\n');
    expect(commentsOf('probe.ts', source).flatMap((comment) => fileNamesIn(comment.text))).toEqual([
      'kept.ts',
      'inner.ts',
      'trailing.ts',
    ]);
  });

  it('names only files that exist', () => {
    const root = packageRoot();
    const names = new Set(repositoryFiles(root).map((file) => path.basename(file)));
    const stale = repositoryComments(root).flatMap((comment) =>
      fileNamesIn(comment.text)
        .filter((name) => !names.has(name))
        .map((name) => `${comment.file}:${comment.line}: ${name}`),
    );
    expect(stale).toEqual([]);
  });
});
