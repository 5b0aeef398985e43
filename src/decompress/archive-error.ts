import { ReconError } from '../errors.ts';

/**
 * Turns an error raised while reading `label` into a one-line ReconError: a failing read of the file itself
 * (it has a `syscall`) is FILE_UNREADABLE, anything a decoder of `format` raised is ARCHIVE_CORRUPT.
 */
export function describeArchiveError(format: string, label: string): (error: Error) => ReconError {
  return (error) => {
    if (error instanceof ReconError) return error;
    if ('syscall' in error)
      return new ReconError('FILE_UNREADABLE', `${label}: cannot read the file (${fileErrorDetail(error)})`, {
        cause: error,
      });
    const detail = oneLine(error.message);
    return new ReconError('ARCHIVE_CORRUPT', `${label}: truncated or corrupt ${format} data (${detail})`, {
      cause: error,
    });
  };
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * A file system error without the path Node appends (`ENOENT: no such file or directory, open 'x.csv'` ->
 * `ENOENT: no such file or directory`): the messages that carry it start with the file already.
 */
export function fileErrorDetail(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const message = oneLine(error.message);
  const { syscall } = error as NodeJS.ErrnoException;
  const end = syscall === undefined ? -1 : message.lastIndexOf(`, ${syscall}`);
  return end === -1 ? message : message.slice(0, end);
}

/**
 * How a zip entry is named in messages and parse labels: the file first, like every message about it, so
 * that a summary line already naming the file can drop that prefix and keep `entry NAME: ...`. Control
 * characters in the name (an archive may hold a line break there) are escaped: a message stays one line.
 */
export function entryLabel(fileName: string, entryName: string): string {
  return `${fileName}: entry ${escapeControlCharacters(entryName)}`;
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what this escapes
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (character) => `\\x${character.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
