import type { FileArrival } from './files-repository.ts';

/** An export file to ingest: where its bytes are read from, what recon calls it, and how it came. */
export interface ExportFile {
  /** A local file, perhaps a temporary one (a delivery spooled out of the database for its ingest). */
  readonly path: string;
  /**
   * recon.files.name, and the file's name in every message and report: the path given to recon ingest, or a
   * delivery's own name, which outlives the temporary file it was read from.
   */
  readonly name: string;
  /** A delivery or a path given to recon ingest: a backfill's answer is no file to read. */
  readonly arrival: Exclude<FileArrival, { kind: 'backfill' }>;
}

/** A path given to recon ingest, which names the file as given. */
export function givenFile(path: string): ExportFile {
  return { path, name: path, arrival: { kind: 'ingest' } };
}
