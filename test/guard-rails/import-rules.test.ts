import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';

/** The layering the lint enforces, checked on code that breaks it (linted as if it sat at the path given). */
describe('import rules', () => {
  // The probes are not files of the project, so its type information cannot reach them: the import rules need none.
  const eslint = new ESLint({ cwd: packageRoot(), overrideConfig: tseslint.configs.disableTypeChecked });
  const restricted = async (filePath: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath });
    return result!.messages
      .filter((message) => message.ruleId === 'no-restricted-imports')
      .map((message) => message.message);
  };

  it('stops a stage from importing a pipeline or the sandbox', async () => {
    expect(
      await restricted(
        'src/reconcile/probe.ts',
        "import { runDemo } from '../../pipelines/demo.ts';\nexport const x = runDemo;\n",
      ),
    ).toEqual([expect.stringContaining('src/ holds the stages')]);
    expect(
      await restricted(
        'src/receive/probe.ts',
        "import { createSandbox } from '@recon/sandbox';\nexport const x = createSandbox;\n",
      ),
    ).toEqual([expect.stringContaining('never imports the sandbox')]);
  });

  it('stops a pipeline other than the demo from importing the sandbox', async () => {
    const code = "import { createSandbox } from '@recon/sandbox';\nexport const x = createSandbox;\n";
    expect(await restricted('pipelines/backfill-probe.ts', code)).toEqual([
      expect.stringContaining('never imports the sandbox'),
    ]);
    expect(await restricted('pipelines/demo.ts', code)).toEqual([]);
  });

  it('keeps each package standing alone', async () => {
    expect(
      await restricted(
        'packages/sandbox/src/export/probe.ts',
        "import { ReconError } from '../../../../src/errors.ts';\nexport const x = ReconError;\n",
      ),
    ).toEqual([expect.stringContaining('a package stands alone')]);
    expect(
      await restricted(
        'packages/protocol/src/probe.ts',
        "import { createSandbox } from '@recon/sandbox';\nexport const x = createSandbox;\n",
      ),
    ).toEqual([expect.stringContaining('never imports the sandbox')]);
    // Its own files, from its tests, are its own.
    expect(
      await restricted(
        'packages/sandbox/test/export/probe.test.ts',
        "import { writeZip } from '../../src/export/zip-writer.ts';\nexport const x = writeZip;\n",
      ),
    ).toEqual([]);
  });
});
