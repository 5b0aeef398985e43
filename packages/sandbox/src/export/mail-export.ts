import nodemailer from 'nodemailer';
import { SandboxError } from '../sandbox-error.ts';
import type { ExportFile } from './compress.ts';

export interface SmtpServerAddress {
  readonly host: string;
  readonly port: number;
}

const SENDER = 'sandbox-exports@recon.invalid';
const SMTP_TIMEOUT_MS = 30_000;

/**
 * One attempt to e-mail an export to a MAILTO address through the configured SMTP server, the file as an
 * attachment. The sandbox talks to a local relay or a test server: no authentication, and no STARTTLS
 * (ignoreTLS), since a loopback test server offers only a self-signed certificate.
 */
export async function mailExport(
  smtp: SmtpServerAddress,
  to: string,
  file: ExportFile,
  identifier: string,
  signal: AbortSignal,
): Promise<void> {
  signal.throwIfAborted();
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: false,
    ignoreTLS: true,
    connectionTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  });
  const abort = () => transport.close();
  signal.addEventListener('abort', abort, { once: true });
  try {
    await transport.sendMail({
      from: SENDER,
      to,
      subject: `getTransactions export for ${identifier}`,
      text: `The transactions export requested for ${identifier} is attached (${file.filename}).\n`,
      attachments: [{ filename: file.filename, content: file.bytes, contentType: file.contentType }],
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SandboxError('NETWORK', `export e-mail to ${to} via ${smtp.host}:${smtp.port} failed: ${reason}`, {
      cause: error,
    });
  } finally {
    signal.removeEventListener('abort', abort);
    transport.close();
  }
}
