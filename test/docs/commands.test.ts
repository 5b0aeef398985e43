import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { documentationFiles, readMarkdown, readText, reconInvocations, type ReconInvocation } from './markdown.ts';

const run = promisify(execFile);
const root = packageRoot();
const files = documentationFiles(root);
const invocations: ReconInvocation[] = files.flatMap((file) =>
  reconInvocations(path.relative(root, file), readMarkdown(readText(file))),
);

/** `recon <command> --help`, run once per command: its exit code and what it printed. */
const helps = new Map<string, Promise<{ code: number; text: string }>>();
function help(command: string) {
  if (!helps.has(command)) {
    helps.set(
      command,
      run(process.execPath, [path.join(root, 'cli', 'main.ts'), command, '--help'], {
        cwd: root,
        env: { ...process.env, RECON_DEBUG: '' },
      }).then(
        ({ stdout, stderr }) => ({ code: 0, text: stdout + stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({
          code: typeof error.code === 'number' ? error.code : -1,
          text: `${error.stdout ?? ''}${error.stderr ?? ''}`,
        }),
      ),
    );
  }
  return helps.get(command)!;
}

describe('commands named in the documentation', () => {
  it('names recon commands', () => {
    expect(new Set(invocations.map((i) => i.command)).size).toBeGreaterThanOrEqual(10);
  });

  it('has `recon <command> --help` exit 0 for every `recon <command>` in a code block or inline code', async () => {
    const failures: string[] = [];
    for (const command of new Set(invocations.map((i) => i.command))) {
      const { code, text } = await help(command);
      if (code !== 0) {
        const where = invocations
          .filter((i) => i.command === command)
          .map((i) => `${i.file}:${i.line}`)
          .join(', ');
        failures.push(`recon ${command} --help exited ${code} (${where}): ${text.split('\n')[0]}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it("names only options that the command's --help lists", async () => {
    const failures: string[] = [];
    for (const { command, options, file, line } of invocations) {
      const { code, text } = await help(command);
      if (code !== 0) continue;
      for (const option of options) {
        if (!new RegExp(`(?<![\\w-])${option}(?![\\w-])`).test(text))
          failures.push(`${file}:${line}: recon ${command} has no option ${option}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

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
