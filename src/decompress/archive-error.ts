import { ReconError } from '../errors.ts';

/**
 * Turns an error raised while reading `label` into a one-line ReconError: a failing read of the file itself
 * (it has a `syscall`) is FILE_UNREADABLE, anything a decoder of `format` raised is ARCHIVE_CORRUPT.
 */
export function describeArchiveError(format: string, label: string): (error: Error) => ReconError {
  return (error) => {
    if (error instanceof ReconError) return error;
    const detail = oneLine(error.message);
    if ('syscall' in error) return new ReconError('FILE_UNREADABLE', `${label}: cannot read the file (${detail})`, { cause: error });
    return new ReconError('ARCHIVE_CORRUPT', `${label}: truncated or corrupt ${format} data (${detail})`, { cause: error });
  };
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** How a zip entry is named in messages and parse labels. */
export function entryLabel(filePath: string, entryName: string): string {
  return `${filePath} (entry ${entryName})`;
}
