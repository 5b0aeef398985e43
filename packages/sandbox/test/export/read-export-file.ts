import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import unbzip2 from 'unbzip2-stream';
import unzipper from 'unzipper';

/**
 * A delivered export back to rows, with readers independent of the sandbox's writers: unzipper for zip,
 * zlib for gzip, the pure-JS unbzip2-stream for bzip2 (the sandbox compresses with the bzip2 binary).
 */
export async function readExportFile(
  filename: string,
  bytes: Buffer,
): Promise<{ csv: string; rows: Record<string, string>[] }> {
  const csv = (await decompress(filename, bytes)).toString('utf8');
  return { csv, rows: parse<Record<string, string>>(csv, { delimiter: ';', columns: true }) };
}

async function decompress(filename: string, bytes: Buffer): Promise<Buffer> {
  if (filename.endsWith('.zip')) {
    const directory = await unzipper.Open.buffer(bytes);
    if (directory.files.length !== 1) throw new Error(`expected one zip entry, found ${directory.files.length}`);
    return directory.files[0]!.buffer();
  }
  if (filename.endsWith('.gz')) return gunzipSync(bytes);
  if (filename.endsWith('.bz2')) {
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      Readable.from([bytes])
        .pipe(unbzip2())
        .on('data', (chunk: Buffer) => chunks.push(chunk))
        .on('end', resolve)
        .on('error', reject);
    });
    return Buffer.concat(chunks);
  }
  if (filename.endsWith('.csv')) return bytes;
  throw new Error(`unexpected export file name ${filename}`);
}
