import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { commentsOf, issueReferencesIn, repositoryComments } from './source-comments.ts';

/**
 * A comment says why in words a reader has before them: the tracker where this project's work was discussed is not
 * in the repository, so a comment that sends the reader to one of its numbers sends them nowhere.
 */
describe('issue numbers in comments', () => {
  it("finds this project's issue numbers and lets other projects' through", () => {
    const found = (text: string) => issueReferencesIn(commentsOf('probe.ts', text)[0]!.text);
    expect(found('// the rules of issue 6, "Verdicts"')).toEqual(['issue 6']);
    expect(found('/* see Issue #12 */')).toEqual(['Issue #12']);
    expect(found('// fixed in #48')).toEqual(['#48']);
    expect(found('// (brianc/node-postgres#2707): a read never settles')).toEqual([]);
    expect(found("// escapes ' as &#39;, and the issuer's refusal")).toEqual([]);
  });

  it('has none in the code', () => {
    const references = repositoryComments(packageRoot()).flatMap((comment) =>
      issueReferencesIn(comment.text).map((reference) => `${comment.file}:${comment.line}: ${reference}`),
    );
    expect(references).toEqual([]);
  });
});
