import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { COMMANDS, main } from '../../cli/recon-cli.ts';
import { packageRoot } from '../../src/package-root.ts';
import { documentationFiles, readMarkdown, readText, reconInvocations, type ReconInvocation } from './markdown.ts';

const root = packageRoot();
const files = documentationFiles(root);
const invocations: ReconInvocation[] = files.flatMap((file) =>
  reconInvocations(path.relative(root, file), readMarkdown(readText(file))),
);
const commands = Object.keys(COMMANDS).sort();

/** `recon <command> --help`, run in this process: its exit code and what it printed. */
async function help(command: string): Promise<{ code: number; text: string }> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const code = await main([command, '--help'], {
    env: { ...process.env, RECON_DEBUG: '' },
    stdout: out,
    stderr: out,
    signal: new AbortController().signal,
  });
  return { code, text: Buffer.concat(chunks).toString('utf8') };
}
const helps = new Map(commands.map((command) => [command, help(command)]));

/** The long options a command takes, `--help` aside, as `--name`: the OPTIONS of its module (the sandbox's own). */
async function optionsOf(command: string): Promise<string[]> {
  const module = await COMMANDS[command]!.load();
  const options = command === 'sandbox' ? (await import('@recon/sandbox/cli')).OPTIONS : module.OPTIONS;
  if (!options) throw new Error(`cli/commands/${command}.ts exports no OPTIONS`);
  return Object.keys(options)
    .filter((name) => name !== 'help')
    .map((name) => `--${name}`);
}

/** `--name` as a whole word of `text`. */
const names = (text: string, option: string) => new RegExp(`(?<![\\w-])${option}(?![\\w-])`).test(text);

/**
 * The README's table of commands: for each `recon <command>` row, the page of docs/ its last column links. A
 * command's page is where it and every option it takes are explained.
 */
function commandPages(readme: string): Map<string, string> {
  const pages = new Map<string, string>();
  for (const match of readme.matchAll(/^\| `recon ([a-z-]+)[^`]*` \|.*\| \[[^\]]+\]\(([^)#]+)(?:#[^)]*)?\) \|$/gm))
    pages.set(match[1]!, match[2]!);
  return pages;
}

describe('the commands of recon and their docs', () => {
  const pages = commandPages(readText(path.join(root, 'README.md')));

  it("has a row in the README's table for every command, linking its page, and none for a command that is gone", () => {
    expect(commands.length).toBeGreaterThanOrEqual(15);
    expect([...pages.keys()].sort()).toEqual(commands);
  });

  it.each(commands)(
    'recon %s --help exits 0 and lists every option of the command, and none other',
    async (command) => {
      const { code, text } = await helps.get(command)!;
      expect(code, text).toBe(0);
      const options = await optionsOf(command);
      expect(options.filter((option) => !names(text, option))).toEqual([]);
      const listed = new Set([...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((match) => match[0]));
      expect([...listed].filter((option) => option !== '--help' && !options.includes(option))).toEqual([]);
    },
  );

  it.each(commands)('the page of recon %s names it and explains every option it takes', async (command) => {
    const page = pages.get(command);
    expect(page, `no row for recon ${command} in the README's table`).toBeDefined();
    const text = readText(path.join(root, page!));
    expect(names(text, `recon ${command}`), `${page} does not name recon ${command}`).toBe(true);
    const missing = (await optionsOf(command)).filter((option) => !names(text, option));
    expect(missing, `options of recon ${command} that ${page} does not name`).toEqual([]);
  });

  describe('the check itself', () => {
    it("reads the README's rows: the command, and the page without its anchor", () => {
      expect([
        ...commandPages(
          [
            '| command | what it does | read |',
            '|---|---|---|',
            '| `recon ingest FILE...` | loads | [ingest](docs/ingest.md) |',
            '| `recon sync-orders` | reads | [orders](docs/orders.md#recon-sync-orders) |',
            '| `recon runs` | lists, [with a link](docs/nightly.md) in its text | [nightly](docs/nightly.md) |',
          ].join('\n'),
        ),
      ]).toEqual([
        ['ingest', 'docs/ingest.md'],
        ['sync-orders', 'docs/orders.md'],
        ['runs', 'docs/nightly.md'],
      ]);
    });

    it('finds an option as a whole word only', () => {
      expect(names('recon report --format csv', '--format')).toBe(true);
      expect(names('recon reconcile --order-id ID', '--order')).toBe(false);
      expect(names('--dry-run first', '--dry')).toBe(false);
    });
  });
});

describe('commands named in the documentation', () => {
  it('names recon commands', () => {
    expect(new Set(invocations.map((i) => i.command)).size).toBeGreaterThanOrEqual(10);
  });

  it('names only commands that recon has, with options they take', async () => {
    const failures: string[] = [];
    for (const { command, options, file, line } of invocations) {
      if (!(command in COMMANDS)) {
        failures.push(`${file}:${line}: recon has no command ${command}`);
        continue;
      }
      const known = await optionsOf(command);
      for (const option of options) {
        if (option !== '--help' && !known.includes(option))
          failures.push(`${file}:${line}: recon ${command} has no option ${option}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('names only npm scripts that package.json defines', () => {
    const scripts = (
      JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    const failures: string[] = [];
    for (const file of files) {
      readText(file)
        .split('\n')
        .forEach((text, index) => {
          for (const match of text.matchAll(/\bnpm (?:run(?:-script)? ([\w:.-]+)|(start|test)\b)/g)) {
            const script = match[1] ?? match[2]!;
            if (!(script in scripts))
              failures.push(
                `${path.relative(root, file)}:${index + 1}: npm run ${script}: no such script in package.json`,
              );
          }
        });
    }
    expect(failures).toEqual([]);
  });
});
