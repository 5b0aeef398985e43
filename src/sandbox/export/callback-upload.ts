import { ReconError } from '../../errors.ts';
import type { ExportFile } from './compress.ts';

/** Longest wait for one upload attempt before it counts as failed and is retried. */
const UPLOAD_TIMEOUT_MS = 30_000;

/**
 * One attempt to deliver an export to a CALLBACKURL: a multipart/form-data POST with the file in a part named
 * `file` (filename and content type set) next to plain fields describing it. Anything but a 2xx is a failure.
 */
export async function uploadExport(
  url: string,
  file: ExportFile,
  fields: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<void> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([file.bytes], { type: file.contentType }), file.filename);

  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      body: form,
      signal: AbortSignal.any([signal, AbortSignal.timeout(UPLOAD_TIMEOUT_MS)]),
    });
  } catch (error) {
    throw new ReconError('NETWORK', `export upload to ${url} failed: ${describeCause(error)}`, { cause: error });
  }
  // Drain the body so the connection can be reused or closed.
  await response.arrayBuffer().catch(() => undefined);
  if (!response.ok) throw new ReconError('NETWORK', `export upload to ${url} answered HTTP ${response.status}`);
}

function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}
