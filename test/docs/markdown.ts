import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../src/package-root.ts';

/** The documentation the tests of test/docs/ hold to account: the README and every page of docs/. */
export function documentationFiles(root = packageRoot()): string[] {
  const docs = path.join(root, 'docs');
  const pages = existsSync(docs)
    ? readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => path.join(docs, name))
    : [];
  return [path.join(root, 'README.md'), ...pages];
}

export interface CodeBlock {
  /** The info string after the opening fence: `sql`, `sh`, `mermaid`, or empty. */
  readonly language: string;
  readonly text: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
}

export interface Markdown {
  readonly blocks: readonly CodeBlock[];
  /** Every inline code span outside the fenced blocks, with its line. */
  readonly spans: readonly { readonly text: string; readonly line: number }[];
  /** Every link target outside code: inline links and images, and reference definitions. */
  readonly links: readonly { readonly target: string; readonly line: number }[];
  /** The anchors GitHub gives the headings, in order, duplicates numbered. */
  readonly anchors: ReadonlySet<string>;
  /** The text outside fenced blocks, with inline code spans kept. */
  readonly prose: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;

/** A small reader of the markdown GitHub renders, enough to find the code, the links and the headings of a page. */
export function readMarkdown(text: string): Markdown {
  const blocks: CodeBlock[] = [];
  const spans: { text: string; line: number }[] = [];
  const links: { target: string; line: number }[] = [];
  const anchors = new Set<string>();
  const slugCounts = new Map<string, number>();
  const prose: string[] = [];
  const lines = text.split('\n');
  let open: { fence: string; language: string; line: number; body: string[] } | undefined;
  lines.forEach((line, index) => {
    const number = index + 1;
    const fence = FENCE.exec(line);
    if (open) {
      if (fence && fence[1]!.startsWith(open.fence) && line.trim() === fence[1]) {
        blocks.push({ language: open.language, text: open.body.join('\n'), line: open.line });
        open = undefined;
      } else {
        open.body.push(line);
      }
      return;
    }
    if (fence) {
      open = { fence: fence[1]!, language: fence[2] ?? '', line: number, body: [] };
      return;
    }
    prose.push(line);
    const withoutCode = line.replace(/(`+)(.+?)\1/g, (_, _ticks: string, code: string) => {
      spans.push({ text: code.trim(), line: number });
      return ' '.repeat(code.length + 2);
    });
    for (const match of withoutCode.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: match[1]!, line: number });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(withoutCode);
    if (definition) links.push({ target: definition[1]!, line: number });
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1]!);
      const seen = slugCounts.get(slug) ?? 0;
      slugCounts.set(slug, seen + 1);
      anchors.add(seen === 0 ? slug : `${slug}-${seen}`);
    }
  });
  if (open) throw new Error(`a code block opened on line ${open.line} is never closed`);
  return { blocks, spans, links, anchors, prose: prose.join('\n') };
}

/**
 * The anchor GitHub gives a heading: its rendered text (links reduced to their text, code and emphasis marks
 * dropped), lower-cased, every character but letters, digits, marks, `_`, `-` and spaces removed, spaces made `-`.
 */
export function githubSlug(heading: string): string {
  const rendered = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The line of `recon <command> ...` found in code: the command, and the options named after it on that line. */
export interface ReconInvocation {
  readonly command: string;
  readonly options: readonly string[];
  readonly file: string;
  readonly line: number;
}

/**
 * Every `recon <command>` named in a code block or an inline code span. The options are the `--flags` that follow
 * it up to the end of its shell command (a pipe, `;`, `&`, `>` or the end of the line).
 */
export function reconInvocations(file: string, markdown: Markdown): ReconInvocation[] {
  const found: ReconInvocation[] = [];
  const scan = (text: string, line: number) => {
    for (const match of text.matchAll(/(?<![\w./-])recon ([a-z][a-z-]*)([^|;&>\n]*)/g)) {
      const options = [...match[2]!.matchAll(/(?<![\w-])(--[a-z][a-z-]*)/g)].map((option) => option[1]!);
      found.push({ command: match[1]!, options, file, line });
    }
  };
  for (const block of markdown.blocks) {
    block.text.split('\n').forEach((text, index) => scan(text, block.line + 1 + index));
  }
  for (const span of markdown.spans) scan(span.text, span.line);
  return found;
}

export function readText(file: string): string {
  return readFileSync(file, 'utf8');
}
