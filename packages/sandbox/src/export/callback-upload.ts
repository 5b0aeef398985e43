import { SandboxError } from '../sandbox-error.ts';
import type { CallbackFormat } from './callback-switches.ts';
import type { ExportFile } from './compress.ts';

/** Longest wait for one upload attempt before it counts as failed and is retried. */
const UPLOAD_TIMEOUT_MS = 30_000;

/**
 * One attempt to deliver an export to a CALLBACKURL. `multipart`: a multipart/form-data POST with the file in a part
 * named `file` (filename and content type set) next to plain fields describing it. `raw`: the file's bytes are the
 * body, its content type (application/zip, application/gzip, application/x-bzip2, or text/csv uncompressed) the
 * Content-Type, and the fields are not sent. Anything but a 2xx is a failure.
 */
export async function uploadExport(
  url: string,
  file: ExportFile,
  fields: Readonly<Record<string, string>>,
  format: CallbackFormat,
  signal: AbortSignal,
): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      ...requestBody(file, fields, format),
      signal: AbortSignal.any([signal, AbortSignal.timeout(UPLOAD_TIMEOUT_MS)]),
    });
  } catch (error) {
    throw new SandboxError('NETWORK', `export upload to ${url} failed: ${describeCause(error)}`, { cause: error });
  }
  // Drain the body so the connection can be reused or closed.
  await response.arrayBuffer().catch(() => undefined);
  if (!response.ok) throw new SandboxError('NETWORK', `export upload to ${url} answered HTTP ${response.status}`);
}

function requestBody(file: ExportFile, fields: Readonly<Record<string, string>>, format: CallbackFormat): RequestInit {
  if (format === 'raw') return { body: new Uint8Array(file.bytes), headers: { 'content-type': file.contentType } };
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([file.bytes], { type: file.contentType }), file.filename);
  return { body: form };
}

function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}
