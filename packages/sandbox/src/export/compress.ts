import { spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { SandboxError } from '../sandbox-error.ts';
import type { Compression } from '@recon/protocol';
import { writeZip } from './zip-writer.ts';

/** A file ready to upload or attach. */
export interface ExportFile {
  readonly filename: string;
  readonly contentType: string;
  readonly bytes: Buffer;
}

const gzipAsync = promisify(gzip);

/**
 * The csv named `csvName` (e.g. `transactions-20260101-120000.csv`), compressed as COMPRESSION asks;
 * without COMPRESSION the csv travels as is.
 */
export async function compressExport(
  csvName: string,
  csv: Buffer,
  compression: Compression | undefined,
  modifiedAt: Date,
): Promise<ExportFile> {
  switch (compression) {
    case undefined:
      return { filename: csvName, contentType: 'text/csv; charset=utf-8', bytes: csv };
    case 'zip':
      return {
        filename: `${csvName}.zip`,
        contentType: 'application/zip',
        bytes: writeZip([{ name: csvName, data: csv, method: 'deflate', modifiedAt }]),
      };
    case 'gzip':
      return { filename: `${csvName}.gz`, contentType: 'application/gzip', bytes: await gzipAsync(csv) };
    case 'bzip':
      return { filename: `${csvName}.bz2`, contentType: 'application/x-bzip2', bytes: await bzip2(csv) };
  }
}

/**
 * bzip2 through the system's `bzip2` binary: no maintained pure-JS compressor exists, and the binary is the
 * reference implementation. Without it on PATH a bzip export fails with a message saying so.
 */
function bzip2(content: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('bzip2', ['-c', '-z', '-9'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error: NodeJS.ErrnoException) => {
      const message =
        error.code === 'ENOENT'
          ? 'COMPRESSION=bzip needs the bzip2 program on PATH, and it was not found'
          : `bzip2 could not be started: ${error.message}`;
      reject(new SandboxError('CONFIG', message, { cause: error }));
    });
    child.on('close', (exitCode) => {
      if (exitCode === 0) resolve(Buffer.concat(output));
      else reject(new SandboxError('CONFIG', `bzip2 exited with code ${exitCode}: ${stderr.trim()}`));
    });
    // An EPIPE here means bzip2 died early; its exit code above already reports why.
    child.stdin.on('error', () => {});
    child.stdin.end(content);
  });
}
