import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ReconError } from '../errors.ts';
import { packageRoot } from '../package-root.ts';

/**
 * A view or function defined as code: one file per object under sql/<schema>/<name>.sql, holding its current
 * definition (CREATE VIEW or CREATE FUNCTION, then its comments and privileges). Numbered migrations keep what holds
 * data; these are re-created whenever a file's text changed (see migrate.ts).
 */
export interface Definition {
  /** As recorded and reported: `reporting/exceptions.sql`. */
  readonly file: string;
  readonly kind: 'view' | 'function';
  /** Schema-qualified, as the file's CREATE names it: `reporting.exceptions`. */
  readonly name: string;
  readonly script: string;
  readonly sha256: string;
}

/** The schemas whose objects are defined as code, in the folders of the same names. */
const SCHEMAS = ['recon', 'reporting'] as const;

export function definitionsRoot(): string {
  return path.join(packageRoot(), 'sql');
}

/** Every definition under `root`, in an order where each comes after the definitions it names. */
export async function readDefinitions(root = definitionsRoot()): Promise<Definition[]> {
  const definitions: Definition[] = [];
  for (const schema of SCHEMAS) {
    const names = await readdir(path.join(root, schema)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    for (const fileName of names.filter((name) => name.endsWith('.sql')).sort()) {
      const file = `${schema}/${fileName}`;
      const script = await readFile(path.join(root, schema, fileName), 'utf8');
      definitions.push({ file, ...parseDefinition(file, script) });
    }
  }
  return inDependencyOrder(definitions);
}

function parseDefinition(file: string, script: string): Omit<Definition, 'file'> {
  const create = /^CREATE\s+(VIEW|FUNCTION)\s+([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)/im.exec(withoutComments(script));
  const expected = file.replace('/', '.').replace(/\.sql$/, '');
  if (!create || create[2]!.toLowerCase() !== expected) {
    throw new ReconError(
      'MIGRATION',
      `sql/${file} must define ${expected} with CREATE VIEW ${expected} or CREATE FUNCTION ${expected}(...)`,
    );
  }
  return {
    kind: create[1]!.toLowerCase() as Definition['kind'],
    name: expected,
    script,
    sha256: createHash('sha256').update(script).digest('hex'),
  };
}

/**
 * Dependencies are the other definitions a file's statements name (comments and string literals aside, the
 * bodies of functions included): a view is created after the views and functions it reads. Ties go by file name, so
 * the order is the same on every machine.
 */
function inDependencyOrder(definitions: readonly Definition[]): Definition[] {
  const code = new Map(definitions.map((definition) => [definition.name, withoutLiterals(definition.script)]));
  const needs = new Map(
    definitions.map((definition) => [
      definition.name,
      definitions
        .filter((other) => other.name !== definition.name && namesObject(code.get(definition.name)!, other.name))
        .map((other) => other.name),
    ]),
  );
  const ordered: Definition[] = [];
  const placed = new Set<string>();
  let remaining = [...definitions];
  while (remaining.length > 0) {
    const ready = remaining.filter((definition) => needs.get(definition.name)!.every((name) => placed.has(name)));
    if (ready.length === 0) {
      throw new ReconError(
        'MIGRATION',
        `the definitions ${remaining.map((definition) => `sql/${definition.file}`).join(', ')} name each other in a circle`,
      );
    }
    for (const definition of ready) {
      ordered.push(definition);
      placed.add(definition.name);
    }
    remaining = remaining.filter((definition) => !placed.has(definition.name));
  }
  return ordered;
}

function namesObject(code: string, name: string): boolean {
  return new RegExp(`(^|[^\\w.])${name.replace('.', '\\.')}(?![\\w])`, 'i').test(code);
}

function withoutComments(script: string): string {
  return script.replace(/--[^\n]*/g, '');
}

/** The script without comments and quoted strings (a column's comment naming another view is no dependency). */
function withoutLiterals(script: string): string {
  return withoutComments(script).replace(/'(?:[^']|'')*'/g, "''");
}
