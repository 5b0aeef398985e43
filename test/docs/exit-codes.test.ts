import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../cli/exit-codes.ts';
import { COMMANDS, main } from '../../cli/recon-cli.ts';
import { packageRoot } from '../../src/package-root.ts';
import { documentationFiles, readText } from './markdown.ts';

const root = packageRoot();
const codes: number[] = Object.values(EXIT).sort();
/** The codes main() itself gives any command: success, a usage error, a failure thrown. */
const EVERY_COMMAND = new Set<keyof typeof EXIT>(['ok', 'usage', 'failed']);

/** The rows of the table under `## Exit codes` in docs/operations.md: each code and the commands its row names. */
function exitCodeTable(page: string): Map<number, string[]> {
  const start = page.indexOf('\n## Exit codes\n');
  const section = page.slice(start, page.indexOf('\n## ', start + 1));
  return new Map(
    [...section.matchAll(/^\| `(\d+)` \| (.+) \|$/gm)].map((match) => [
      Number(match[1]),
      [...new Set([...match[2]!.matchAll(/`recon ([a-z-]+)/g)].map((command) => command[1]!))].sort(),
    ]),
  );
}

/** A number opening a clause of a help's "exit codes: 0 ..., 3 ...", unless a unit follows it (`30 s`). */
const CLAUSE_START =
  /(?:exit codes:|[,;]|\n)\s*(\d+) (?!(?:s|ms|seconds?|minutes?|hours?|days?|[KMG]i?B|bytes?)\b)(?=[a-z])/gi;

/**
 * The exit codes a text names: `exit 2`, `exits 1`, and in a paragraph or section about exit codes, the codes it
 * lists (`0` in backticks in the docs; at the start of each clause in a command's help: "exit codes: 0 ..., 3 ...").
 */
function exitCodesNamed(text: string): number[] {
  const found = [...text.matchAll(/\bexit(?:s|ed)? (?:code )?`?(\d+)`?/gi)].map((match) => Number(match[1]));
  const sections = text.split(/\n(?=#)/).filter((section) => /^#+ .*exit codes/im.test(section.split('\n')[0]!));
  const paragraphs = text.split(/\n\s*\n/).filter((paragraph) => /exit codes/i.test(paragraph));
  for (const part of [...sections, ...paragraphs]) {
    const listed = part.slice(part.search(/exit codes/i));
    for (const match of listed.matchAll(/`(\d+)`/g)) found.push(Number(match[1]));
    for (const match of listed.matchAll(CLAUSE_START)) found.push(Number(match[1]));
  }
  return [...new Set(found)].sort();
}

async function help(command: string): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  await main([command, '--help'], { env: process.env, stdout: out, stderr: out, signal: new AbortController().signal });
  return Buffer.concat(chunks).toString('utf8');
}

/** The commands whose module returns EXIT[name]: it names it, or a command module it imports does. */
function commandsReturning(name: keyof typeof EXIT): string[] {
  const source = (command: string) => readFileSync(path.join(root, 'cli', 'commands', `${command}.ts`), 'utf8');
  return Object.keys(COMMANDS)
    .filter((command) => {
      const text = source(command);
      const siblings = [...text.matchAll(/from '\.\/([a-z-]+)\.ts'/g)].map((match) => source(match[1]!));
      return [text, ...siblings].some((each) => each.includes(`EXIT.${name}`));
    })
    .sort();
}

describe('exit codes in the docs', () => {
  const table = exitCodeTable(readText(path.join(root, 'docs', 'operations.md')));

  it('docs/operations.md has a row for every code of cli/exit-codes.ts, and none other', () => {
    expect(codes.length).toBeGreaterThanOrEqual(4);
    expect([...table.keys()].sort()).toEqual(codes);
  });

  it.each(Object.entries(EXIT).filter(([name]) => !EVERY_COMMAND.has(name as keyof typeof EXIT)))(
    'the row of %s (%i) names the commands that exit with it, as their --help does',
    async (name, code) => {
      const commands = commandsReturning(name as keyof typeof EXIT);
      expect(commands.length).toBeGreaterThan(0);
      expect(table.get(code)).toEqual(commands);
      const helping = [];
      for (const command of Object.keys(COMMANDS).sort())
        if (exitCodesNamed(await help(command)).includes(code)) helping.push(command);
      expect(helping).toEqual(commands);
    },
  );

  it('every exit code a page or a command names is one of cli/exit-codes.ts', async () => {
    const strays: string[] = [];
    for (const file of documentationFiles(root)) {
      for (const code of exitCodesNamed(readText(file)))
        if (!codes.includes(code)) strays.push(`${path.relative(root, file)}: exit code ${code}`);
    }
    for (const command of Object.keys(COMMANDS)) {
      for (const code of exitCodesNamed(await help(command)))
        if (!codes.includes(code)) strays.push(`recon ${command} --help: exit code ${code}`);
    }
    expect(strays).toEqual([]);
  });

  describe('the check itself', () => {
    it('reads the codes a page or a help names', () => {
      expect(
        exitCodesNamed('Exit codes: `0` loaded; `3` rows were rejected (the rest\nloaded); `2` failed, 30 s.'),
      ).toEqual([0, 2, 3]);
      expect(exitCodesNamed('## Exit codes\n\n- `0`: written.\n- `2`: no run.\n\n## Next\n\n`7` is not one')).toEqual([
        0, 2,
      ]);
      expect(
        exitCodesNamed(
          'exit codes: 0 every file loaded, 3 some rows were rejected,\n2 a file failed (SIGINT, SIGTERM: rolled back),\n1 usage error.',
        ),
      ).toEqual([0, 1, 2, 3]);
      expect(exitCodesNamed('--wait  until it is reconciled (exit 0) or failed (exit 2); within 30 s')).toEqual([0, 2]);
    });
  });
});
