import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { findExecutable } from '../../src/decompress/find-executable.ts';
import { openExport } from '../../src/decompress/open-export.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

const FIXTURE = path.join(import.meta.dirname, '..', '..', 'fixtures', 'trailing-garbage.csv.bz2');
const LIMITS = loadConfig({}).limits;
const lbzip2 = await findExecutable(['lbzip2']);
const bzip2 = await findExecutable(['bzip2']);

const scratch = mkdtempSync(path.join(tmpdir(), 'recon-bzip2-trailing-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The decompressed bytes through openExport with `decoder`, and the warnings it gave. */
async function decode(file: string, decoder: 'native' | 'js'): Promise<{ text: string; warnings: string[] }> {
  const warnings: string[] = [];
  const opened = await openExport(file, LIMITS, {
    bzip2Decoder: decoder,
    onWarning: (message) => warnings.push(message),
  });
  const chunks: Buffer[] = [];
  try {
    for await (const entry of opened.entries)
      for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
  } finally {
    await opened.close();
  }
  return { text: Buffer.concat(chunks).toString('utf8'), warnings };
}

/** What a bzip2 binary itself writes for `file` (it exits 0 and warns on stderr about trailing bytes). */
function decodedBy(executable: string, file: string): string {
  const result = spawnSync(executable, ['-d', '-c'], { input: readFileSync(file), maxBuffer: 16 * 1024 * 1024 });
  expect(result.status).toBe(0);
  return result.stdout.toString('utf8');
}

describe('bytes after the last bzip2 stream', () => {
  it('give the same rows through the JavaScript decoder, lbzip2 and bzip2, and the JavaScript decoder warns', async () => {
    const js = await decode(FIXTURE, 'js');
    expect(js.text.split('\n').filter((line) => line.startsWith('ACME-SHOP'))).toHaveLength(6);
    expect(js.warnings).toEqual([`${FIXTURE}: bytes after the last bzip2 stream ignored`]);
    if (lbzip2 !== undefined) expect(decodedBy(lbzip2, FIXTURE)).toBe(js.text);
    if (bzip2 !== undefined) expect(decodedBy(bzip2, FIXTURE)).toBe(js.text);
  });

  it.runIf(lbzip2 !== undefined || bzip2 !== undefined)(
    'give the same rows through the native decoder, which passes on what it says',
    async () => {
      const native = await decode(FIXTURE, 'native');
      expect(native.text).toBe((await decode(FIXTURE, 'js')).text);
      // lbzip2, found first, says nothing; bzip2 warns.
      expect(native.warnings).toEqual(
        lbzip2 !== undefined ? [] : [`${FIXTURE}: bzip2: trailing garbage after EOF ignored`],
      );
    },
  );

  it.each([
    ['a lone byte', Buffer.from('X')],
    ['zeros', Buffer.alloc(512)],
    ['text', Buffer.from('this is not bzip2 data\n')],
  ])(
    '%s after two streams are ignored by the JavaScript decoder, the rows of both streams kept',
    async (_what, garbage) => {
      const streams = ['A;B\n1;2\n', '3;4\n'].map((part) => spawnSync('bzip2', ['-c'], { input: part }).stdout);
      const file = path.join(scratch, `garbage-${garbage.length}.bz2`);
      writeFileSync(file, Buffer.concat([...streams, garbage]));
      const { text, warnings } = await decode(file, 'js');
      expect(text).toBe('A;B\n1;2\n3;4\n');
      expect(warnings).toHaveLength(1);
    },
  );

  it('a file without trailing bytes gives no warning', async () => {
    const file = path.join(scratch, 'clean.bz2');
    writeFileSync(file, spawnSync('bzip2', ['-c'], { input: 'A;B\n1;2\n' }).stdout);
    expect(await decode(file, 'js')).toEqual({ text: 'A;B\n1;2\n', warnings: [] });
  });

  it.each([
    ['another stream header and then garbage', 'BZh9garbage'],
    ['a stream header alone', 'BZh9'],
  ])('%s after the last stream still fail: that is a broken stream, not trailing bytes', async (_what, tail) => {
    const file = path.join(scratch, `broken-${tail.length}.bz2`);
    writeFileSync(file, Buffer.concat([spawnSync('bzip2', ['-c'], { input: 'A;B\n' }).stdout, Buffer.from(tail)]));
    await expectReconError(() => decode(file, 'js'), 'ARCHIVE_CORRUPT', file, 'bzip2');
  });

  it('a bad block size digit in the first header still fails', async () => {
    const bytes = Buffer.from(spawnSync('bzip2', ['-c'], { input: 'A;B\n' }).stdout);
    bytes[3] = 0x30;
    const file = path.join(scratch, 'bad-digit.bz2');
    writeFileSync(file, bytes);
    await expectReconError(() => decode(file, 'js'), 'ARCHIVE_CORRUPT', file, 'bzip2');
  });
});
