/**
 * `npm run build`'s last step: the data directory new embedded databases start from (src/db/pglite-template.ts).
 * Made once per PGlite version, in about 10 s; kept when this version's is there already.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pgliteTemplatePath, writePgliteTemplate } from '../src/db/pglite-template.ts';

const file = pgliteTemplatePath();
if (!existsSync(file)) {
  await writePgliteTemplate(file);
  process.stderr.write(`made ${path.relative(process.cwd(), file)}\n`);
}
