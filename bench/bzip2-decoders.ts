/**
 * The bzip2 decoders recon can use, on the same export: `node bench/bzip2-decoders.ts [rows]`. Not a test; the
 * measurement behind docs/architecture.md's choice of a native decoder first (lbzip2, else bzip2) and
 * unbzip2-stream, pure JavaScript, only where neither is installed. Needs `bzip2` on PATH; `lbzip2` is measured
 * when installed.
 *
 * The export of bench/generate-export.ts is bzip2-compressed once (bench/.work/, kept for the next run), then
 * decoded by each decoder in turn, three rounds: the binaries to /dev/null, the JavaScript decoder in this process
 * as recon drives it (createJsBzip2Decompressor, fed 64 KiB chunks). Each figure is the decoder's CPU seconds,
 * which other processes on a shared machine do not inflate; the medians are compared with bzip2's.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createJsBzip2Decompressor } from '../src/decompress/js-bzip2-decompressor.ts';
import { findExecutable } from '../src/decompress/find-executable.ts';
import { generateExport } from './generate-export.ts';

const rows = Number(process.argv[2] ?? 1_000_000);
const work = path.join(path.dirname(fileURLToPath(import.meta.url)), '.work');
mkdirSync(work, { recursive: true });
const csv = path.join(work, `export-${rows}.csv`);
const file = `${csv}.bz2`;
if (!existsSync(file)) {
  if (!existsSync(csv)) await generateExport(csv, rows);
  console.log(`compressing ${csv} with bzip2 (once)...`);
  const compressed = spawnSync('bzip2', ['-k', '-f', csv], { stdio: 'inherit' });
  if (compressed.status !== 0) throw new Error('bzip2 failed');
  renameSync(`${csv}.bz2`, file);
}

/** CPU seconds of a binary decoding the file to /dev/null, as GNU time counts them. */
function binary(command: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', '%U %S', command, '-d', '-c', file], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const [user, system] = (stderr.trimEnd().split('\n').pop() ?? '').split(' ').map(Number);
      if (code !== 0 || !Number.isFinite(user) || !Number.isFinite(system))
        return reject(new Error(`${command} -d failed: ${stderr.slice(-300)}`));
      resolve(user! + system!);
    });
  });
}

async function javascript(): Promise<number> {
  const before = process.cpuUsage();
  let bytes = 0;
  await pipeline(
    createReadStream(file, { highWaterMark: 64 * 1024 }),
    createJsBzip2Decompressor(),
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        callback();
      },
    }),
  );
  const used = process.cpuUsage(before);
  if (bytes === 0) throw new Error('the JavaScript decoder gave nothing');
  return (used.user + used.system) / 1e6;
}

const decoders: [string, () => Promise<number>][] = [
  ['bzip2', () => binary('bzip2')],
  ...((await findExecutable(['lbzip2']))
    ? [['lbzip2', () => binary('lbzip2')] as [string, () => Promise<number>]]
    : []),
  ['unbzip2-stream', javascript],
];
const figures = new Map<string, number[]>(decoders.map(([name]) => [name, []]));
for (let round = 0; round < 3; round++) for (const [name, decode] of decoders) figures.get(name)!.push(await decode());

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const reference = median(figures.get('bzip2')!);
for (const [name, values] of figures)
  console.log(
    `${name.padEnd(15)} ${median(values).toFixed(2)} s of CPU, ${(median(values) / reference).toFixed(2)}x bzip2's` +
      ` (rounds: ${values.map((s) => s.toFixed(2)).join(', ')})`,
  );
console.log(`(${rows} rows, ${file})`);
