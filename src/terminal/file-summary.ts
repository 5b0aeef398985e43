import type { FileResult } from '../ingest/file-result.ts';

/** One line per file for humans: `FILE: loaded rows=N inserted=N updated=N unchanged=N rejected=N`. */
export function formatFileSummary(result: FileResult): string {
  switch (result.status) {
    case 'loaded': {
      const { rows, inserted, updated, unchanged, rejected, superseded, outdated } = result;
      // Superseded rows (an id twice in one file) and outdated ones (a file older than what a later one wrote) are
      // rare; the line names them only when there are some.
      const supersededPart = superseded > 0 ? ` superseded=${superseded}` : '';
      const outdatedPart = outdated > 0 ? ` outdated=${outdated}` : '';
      return `${result.file}: loaded rows=${rows} inserted=${inserted} updated=${updated} unchanged=${unchanged}${outdatedPart}${supersededPart} rejected=${rejected}`;
    }
    case 'duplicate':
      return `${result.file}: duplicate of file ${result.fileId}, nothing changed`;
    case 'failed': {
      // The stored error names the file so it stands alone; on the file's own line that would say it twice.
      const prefix = `${result.file}: `;
      const reason = result.error.startsWith(prefix) ? result.error.slice(prefix.length) : result.error;
      return `${result.file}: failed: ${reason}`;
    }
  }
}

/** `--json`: one object per file per line, every field named, the same for every status. */
export function formatFileJson(result: FileResult): string {
  return JSON.stringify(fileJson(result));
}

export function fileJson(result: FileResult): Record<string, unknown> {
  return {
    file: result.file,
    status: result.status,
    fileId: result.fileId,
    sha256: result.sha256 ?? null,
    sizeBytes: result.sizeBytes ?? null,
    compression: result.compression ?? null,
    rows: result.status === 'loaded' ? result.rows : null,
    inserted: result.status === 'loaded' ? result.inserted : null,
    updated: result.status === 'loaded' ? result.updated : null,
    unchanged: result.status === 'loaded' ? result.unchanged : null,
    outdated: result.status === 'loaded' ? result.outdated : null,
    superseded: result.status === 'loaded' ? result.superseded : null,
    rejected: result.status === 'loaded' ? result.rejected : null,
    errorCode: result.status === 'failed' ? result.errorCode : null,
    error: result.status === 'failed' ? result.error : null,
  };
}
