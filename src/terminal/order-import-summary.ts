import type { OrderImportResult } from '../orders/order-import-result.ts';

/** One line per import for humans: `NAME: loaded rows=N inserted=N updated=N unchanged=N rejected=N`. */
export function formatOrderImportSummary(result: OrderImportResult): string {
  if (result.status === 'loaded') {
    const { rows, inserted, updated, unchanged, rejected, superseded } = result;
    // Superseded rows are rare (an order twice in one import); the line names them only when there are some.
    const supersededPart = superseded > 0 ? ` superseded=${superseded}` : '';
    return `${result.name}: loaded rows=${rows} inserted=${inserted} updated=${updated} unchanged=${unchanged}${supersededPart} rejected=${rejected}`;
  }
  // The stored error names the file or database so it stands alone; on its own line that would say it twice.
  const prefix = `${result.name}: `;
  const reason = result.error.startsWith(prefix) ? result.error.slice(prefix.length) : result.error;
  return `${result.name}: failed: ${reason}`;
}

/** `--json`: one object per import per line, every field named, the same for both statuses. */
export function formatOrderImportJson(result: OrderImportResult): string {
  const loaded = result.status === 'loaded' ? result : undefined;
  return JSON.stringify({
    source: result.source,
    name: result.name,
    status: result.status,
    importId: result.importId,
    sha256: result.sha256,
    rows: loaded?.rows ?? null,
    inserted: loaded?.inserted ?? null,
    updated: loaded?.updated ?? null,
    unchanged: loaded?.unchanged ?? null,
    superseded: loaded?.superseded ?? null,
    rejected: loaded?.rejected ?? null,
    errorCode: result.status === 'failed' ? result.errorCode : null,
    error: result.status === 'failed' ? result.error : null,
  });
}
