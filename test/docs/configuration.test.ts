import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { documentationFiles, readText } from './markdown.ts';
import { productFiles } from './product-files.ts';

const root = packageRoot();
const source = (file: string) => readFileSync(path.join(root, file), 'utf8');
/** A variable, or a family of them written with a star (`RECON_SANDBOX_*`, `RECON_SCHEDULE*`). */
const VARIABLE = /\b(DATABASE_URL|RECON_[A-Z0-9_]*[A-Z0-9])(_?\*)?(?![A-Za-z0-9_])/g;

/** The keys of the zod object a settings module reads the environment with: `NAME: z...` or `NAME: rule.default(...)`. */
function schemaKeys(file: string): string[] {
  return [...source(file).matchAll(/^\s+(DATABASE_URL|RECON_[A-Z0-9_]+):/gm)].map((match) => match[1]!);
}

/** Variables read straight from the environment, outside the settings modules: `env.RECON_...`, `env['RECON_...']`. */
function directReads(): string[] {
  const read = /\benv(?:\.|\[\s*['"`])(RECON_[A-Z0-9_]+|DATABASE_URL)\b/g;
  return [...new Set(productFiles().flatMap((file) => [...source(file).matchAll(read)].map((match) => match[1]!)))];
}

/** Files that set variables for recon's processes: the image, the compose file, CI, the alert rules' text. */
const DEPLOY_FILES = ['Dockerfile', 'docker-compose.yml', '.ci/run', 'deploy/prometheus/alerts.yml'];

const CONFIG = 'src/config/config.ts';
const SANDBOX = 'packages/sandbox/src/cli/sandbox-settings.ts';

describe('docs/configuration.md', () => {
  const page = readText(path.join(root, 'docs', 'configuration.md'));
  const documented = new Set([...page.matchAll(VARIABLE)].filter((match) => !match[2]).map((match) => match[1]!));
  const defined = new Set([...schemaKeys(CONFIG), ...schemaKeys(SANDBOX), ...directReads()]);

  it('reads the variables of recon and of the sandbox', () => {
    expect(schemaKeys(CONFIG).length).toBeGreaterThan(30);
    expect(schemaKeys(SANDBOX).length).toBeGreaterThan(10);
  });

  it(`documents every variable of ${CONFIG}, of ${SANDBOX} and read from process.env`, () => {
    expect([...defined].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });

  it('documents every variable in a row of its tables, with a default', () => {
    const rows = new Map(
      [...page.matchAll(/^\| `(DATABASE_URL|RECON_[A-Z0-9_]+)` \| ([^|]+) \|/gm)].map((match) => [
        match[1]!,
        match[2]!.trim(),
      ]),
    );
    expect([...defined].filter((name) => !rows.has(name)).sort()).toEqual([]);
    for (const [name, fallback] of rows) expect(fallback, name).not.toBe('');
  });

  it('is where every variable the code, the image, the compose file and CI name is read and explained', () => {
    const strays: string[] = [];
    for (const file of [...productFiles(), ...DEPLOY_FILES]) {
      for (const match of source(file).matchAll(VARIABLE)) {
        const [, name, wildcard] = match;
        const known = wildcard ? [...defined].some((variable) => variable.startsWith(name!)) : defined.has(name!);
        if (!known) strays.push(`${file}: ${name}${wildcard ?? ''}`);
      }
    }
    expect(strays).toEqual([]);
  });

  it('names no variable that recon or the sandbox does not read', () => {
    expect([...documented].filter((name) => !defined.has(name)).sort()).toEqual([]);
  });

  it('is where every variable named anywhere in the documentation is explained', () => {
    const strays: string[] = [];
    for (const file of documentationFiles(root)) {
      readText(file)
        .split('\n')
        .forEach((text, index) => {
          for (const match of text.matchAll(VARIABLE)) {
            const [, name, wildcard] = match;
            const known = wildcard
              ? [...documented].some((variable) => variable.startsWith(name!))
              : documented.has(name!);
            if (!known) strays.push(`${path.relative(root, file)}:${index + 1}: ${name}${wildcard ?? ''}`);
          }
        });
    }
    expect(strays).toEqual([]);
  });
});
