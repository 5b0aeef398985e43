import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHUNK_WAYS, LOAD_STEPS } from '../../src/ingest/load-plan.ts';
import { packageRoot } from '../../src/package-root.ts';
import { readMarkdown, readText } from './markdown.ts';

/** The diagrams of "How a file is loaded" draw the load plan's states by the names load-plan.ts gives them. */
describe('the load plan in architecture.md', () => {
  const text = readText(path.join(packageRoot(), 'docs', 'architecture.md'));
  const lines = text.split('\n');
  const start = lines.indexOf('## How a file is loaded') + 1;
  const end = lines.findIndex((line, index) => index >= start && line.startsWith('## '));
  const diagrams = readMarkdown(text)
    .blocks.filter((block) => block.language === 'mermaid' && block.line > start && block.line < end)
    .map((block) => [...block.text.matchAll(/^\s*state "([^"]+)" as \w+$/gm)].map((match) => match[1]));

  it('draws every step of a file, then every way of a chunk, and nothing else', () => {
    expect(diagrams).toEqual([[...LOAD_STEPS], [...CHUNK_WAYS]]);
  });
});
