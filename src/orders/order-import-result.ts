import type { OrderImportsTable } from '../db/schema.ts';

/**
 * What became of one import of orders (a csv file, or one sync from the merchant's database). Counts of a
 * loaded import: rows = records read = inserted + updated + unchanged + superseded + rejected, where superseded
 * counts the earlier rows of an order id that the same import carries again later (the last wins).
 */
export type OrderImportResult = LoadedOrderImport | FailedOrderImport;

interface ImportFacts {
  readonly source: OrderImportsTable['source'];
  /** The file's path as given, or the database it read (without password). */
  readonly name: string;
  /** Of the file's bytes; null for a database or a file that could not be read. */
  readonly sha256: string | null;
}

export interface LoadedOrderImport extends ImportFacts {
  readonly status: 'loaded';
  readonly importId: string;
  readonly rows: number;
  readonly inserted: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly superseded: number;
  readonly rejected: number;
}

/** Nothing of the import was committed; `importId` is its `failed` row, null if even that could not be written. */
export interface FailedOrderImport extends ImportFacts {
  readonly status: 'failed';
  readonly importId: string | null;
  readonly errorCode: string;
  /** One line, naming the file or database first. */
  readonly error: string;
}
