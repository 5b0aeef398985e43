import { isUtf8 } from 'node:buffer';
import { getFileNameLowLevel, type Entry } from 'yauzl';

/** General purpose bit 11: the entry's name (and comment) are UTF-8. */
const UTF8_FLAG = 0x800;

/**
 * An entry's name as Info-ZIP and Go read it. UTF-8 when the entry says so (bit 11) or an Info-ZIP Unicode Path field
 * gives it, as yauzl reads them; and UTF-8 too when its bytes are valid UTF-8 without the flag, which is how macOS
 * Archive Utility and others write names: read as the format's default CP437, `世界` would be `Σ╕ûτòî` in lineage and
 * messages. Only bytes that are not UTF-8 are CP437. What yauzl checked on the CP437 name (no absolute path, no `..`)
 * holds for this one: `/`, `\\`, `:` and `.` are single bytes that read the same either way.
 */
export function zipEntryName(entry: Entry): string {
  const utf8 = (entry.generalPurposeBitFlag & UTF8_FLAG) !== 0 || isUtf8(entry.fileNameRaw);
  if (!utf8) return entry.fileName;
  // With the flag set, yauzl decodes the bytes as UTF-8 unless a valid Unicode Path field names the entry: as it
  // would for a flagged name, backslashes included.
  return getFileNameLowLevel(entry.generalPurposeBitFlag | UTF8_FLAG, entry.fileNameRaw, entry.extraFields, false);
}
