import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReconError } from '../../src/errors.ts';
import { writeFileAtomically, writeToStream } from '../../src/report/report-output.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

describe('report output', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-report-output-'));
  });
  afterAll(async () => rm(tmp, { recursive: true, force: true }));

  it('replaces the file whole and returns its absolute path', async () => {
    const dir = await mkdtemp(path.join(tmp, 'replace-'));
    const file = path.join(dir, 'report.csv');
    await writeFile(file, 'old');
    expect(await writeFileAtomically(file, ['a,', 'b\r\n'])).toBe(file);
    expect(await readFile(file, 'utf8')).toBe('a,b\r\n');
    expect(await readdir(dir)).toEqual(['report.csv']);
  });

  it('leaves the previous file and no temporary file when the content fails half-way, and passes its error on', async () => {
    const dir = await mkdtemp(path.join(tmp, 'fail-'));
    const file = path.join(dir, 'report.json');
    await writeFile(file, 'previous');
    const interrupted = new ReconError('INTERRUPTED', 'interrupted by SIGINT');
    async function* content() {
      yield '{"head":';
      throw interrupted;
    }
    await expect(writeFileAtomically(file, content())).rejects.toBe(interrupted);
    expect(await readFile(file, 'utf8')).toBe('previous');
    expect(await readdir(dir)).toEqual(['report.json']);
  });

  it('says in one line when the file cannot be written, and leaves nothing behind', async () => {
    const dir = await mkdtemp(path.join(tmp, 'dir-'));
    const target = path.join(dir, 'report.html');
    await mkdir(target);
    await expectReconError(
      () => writeFileAtomically(target, ['<html>']),
      'OUTPUT_UNWRITABLE',
      `cannot write ${target}`,
    );
    expect(await readdir(dir)).toEqual(['report.html']);
  });

  it('waits for a slow reader instead of buffering everything', async () => {
    const received: string[] = [];
    let pendingCallback: (() => void) | undefined;
    const slow = new Writable({
      highWaterMark: 1,
      decodeStrings: false,
      write(chunk: string, _encoding, callback) {
        received.push(chunk);
        pendingCallback = callback;
      },
    });
    let produced = 0;
    function* chunks() {
      for (let i = 0; i < 3; i++) {
        produced++;
        yield `chunk ${i}\n`;
      }
    }
    const writing = writeToStream(chunks(), slow);
    await new Promise((resolve) => setImmediate(resolve));
    // The reader has not acknowledged the first chunk: the writer must not have pulled the rest.
    expect(produced).toBe(1);
    while (received.length < 3) {
      const callback = pendingCallback!;
      pendingCallback = undefined;
      callback();
      await new Promise((resolve) => setImmediate(resolve));
    }
    pendingCallback?.();
    await writing;
    expect(received).toEqual(['chunk 0\n', 'chunk 1\n', 'chunk 2\n']);
  });
});
