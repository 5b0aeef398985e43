import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { documentationFiles, githubSlug, readMarkdown, readText } from './markdown.ts';

/**
 * Every relative link of the README and of docs/*.md reaches a file or folder of the repository, and every `#anchor`
 * a heading of the page it names (GitHub's anchors). Returns one line per broken link.
 */
export function brokenLinks(files: readonly string[], root: string): string[] {
  const anchorsOf = new Map<string, ReadonlySet<string>>();
  const anchors = (file: string) => {
    if (!anchorsOf.has(file)) anchorsOf.set(file, readMarkdown(readText(file)).anchors);
    return anchorsOf.get(file)!;
  };
  const broken: string[] = [];
  for (const file of files) {
    const where = (line: number) => `${path.relative(root, file)}:${line}`;
    for (const { target, line } of readMarkdown(readText(file)).links) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash >= 0 ? target.slice(0, hash) : target);
      const anchor = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : undefined;
      const resolved =
        pathPart === ''
          ? file
          : pathPart.startsWith('/')
            ? path.join(root, pathPart)
            : path.resolve(path.dirname(file), pathPart);
      if (path.relative(root, resolved).startsWith('..')) {
        broken.push(`${where(line)}: ${target} leaves the repository`);
        continue;
      }
      if (!existsSync(resolved)) {
        broken.push(`${where(line)}: ${target}: no such file or folder`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
        broken.push(`${where(line)}: ${target}: an anchor into a file that is not a markdown page`);
      } else if (!anchors(resolved).has(anchor)) {
        broken.push(
          `${where(line)}: ${target}: ${path.relative(root, resolved)} has no heading with the anchor #${anchor}`,
        );
      }
    }
  }
  return broken;
}

describe('links of the documentation', () => {
  const root = packageRoot();

  it('has the README and the pages of docs/', () => {
    const files = documentationFiles(root).map((file) => path.relative(root, file));
    expect(files).toContain('README.md');
    expect(files.filter((file) => file.startsWith('docs/')).length).toBeGreaterThanOrEqual(10);
  });

  it('resolves every relative link and #anchor', () => {
    expect(brokenLinks(documentationFiles(root), root)).toEqual([]);
  });

  describe('the check itself', () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'recon-docs-links-'));
    afterAll(() => rmSync(folder, { recursive: true, force: true }));
    const page = (name: string, text: string) => {
      const file = path.join(folder, name);
      writeFileSync(file, text);
      return file;
    };

    it('reports a missing file, a missing anchor, an anchor into a page that lacks it, and a link out of the repository', () => {
      const other = page('other.md', '# Other\n\n## The receiver of `recon serve`\n');
      const broken = page(
        'broken.md',
        [
          '# Broken',
          '',
          '## A heading',
          '',
          'See [gone](gone.md), [here](#a-heading), [nowhere](#nowhere), [there](other.md#the-receiver-of-recon-serve),',
          '[wrong](other.md#the-receiver), [out](../../etc/passwd), [web](https://example.com/x#y).',
          '`[not a link](in-code.md)`',
          '',
          '```',
          '[not a link either](in-a-block.md)',
          '```',
        ].join('\n'),
      );
      expect(brokenLinks([broken, other], folder)).toEqual([
        'broken.md:5: gone.md: no such file or folder',
        'broken.md:5: #nowhere: broken.md has no heading with the anchor #nowhere',
        'broken.md:6: other.md#the-receiver: other.md has no heading with the anchor #the-receiver',
        'broken.md:6: ../../etc/passwd leaves the repository',
      ]);
    });
  });
});

describe("GitHub's anchors", () => {
  it('are the heading as rendered, lower-cased, punctuation dropped, spaces made hyphens', () => {
    expect(githubSlug('The receiver of `recon serve`')).toBe('the-receiver-of-recon-serve');
    expect(githubSlug("The merchant's orders")).toBe('the-merchants-orders');
    expect(githubSlug('`reporting.run_totals`')).toBe('reportingrun_totals');
    expect(githubSlug('The nightly flow: `recon serve`, `recon worker`')).toBe(
      'the-nightly-flow-recon-serve-recon-worker',
    );
    expect(githubSlug('Loading export files: [`recon ingest`](x.md)')).toBe('loading-export-files-recon-ingest');
  });

  it('number a repeated heading', () => {
    expect([...readMarkdown('# A\n## Notes\n## Notes\n## Notes\n').anchors]).toEqual([
      'a',
      'notes',
      'notes-1',
      'notes-2',
    ]);
  });
});
