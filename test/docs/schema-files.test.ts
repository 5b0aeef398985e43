import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDefinitions } from '../../src/db/definitions.ts';
import { migrationsDir } from '../../src/db/migrate.ts';
import { packageRoot } from '../../src/package-root.ts';
import { readText } from './markdown.ts';

const root = packageRoot();

describe('the docs of sql/', () => {
  it('docs/database.md lists every migration, and only those', () => {
    const page = readText(path.join(root, 'docs', 'database.md'));
    const listed = [...page.matchAll(/^\| `(\d{4}_[\w-]+\.sql)` \| [^|]*\S[^|]* \|$/gm)].map((match) => match[1]!);
    const files = readdirSync(migrationsDir())
      .filter((name) => name.endsWith('.sql'))
      .sort();
    expect(listed).toEqual(files);
  });

  it('docs/reporting.md has a section for every view and function of sql/reporting, and none other', async () => {
    const page = readText(path.join(root, 'docs', 'reporting.md'));
    const sections = [...page.matchAll(/^### `(reporting\.\w+)(?:\([^)]*\))?`$/gm)].map((match) => match[1]!).sort();
    const defined = (await readDefinitions())
      .filter((definition) => definition.name.startsWith('reporting.'))
      .map((definition) => definition.name)
      .sort();
    expect(sections).toEqual(defined);
  });
});
