import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import type { ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { createArrivals } from '../support/arrivals.ts';

export interface MailReceiver {
  readonly host: string;
  readonly port: number;
  /** Every message accepted, decoded, with the envelope's recipients. */
  readonly messages: { readonly to: string[]; readonly mail: ParsedMail }[];
  /** Resolves once `count` messages have been accepted. */
  messageCount(count: number): Promise<void>;
  close(): Promise<void>;
}

/** An SMTP server on loopback that accepts any message without authentication and decodes it. */
export async function startMailReceiver(): Promise<MailReceiver> {
  const messages: { to: string[]; mail: ParsedMail }[] = [];
  const arrivals = createArrivals();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const to = session.envelope.rcptTo.map((recipient) => recipient.address);
      simpleParser(stream)
        .then((mail) => {
          messages.push({ to, mail });
          arrivals.notify();
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    messages,
    messageCount: (count) => arrivals.until(() => messages.length >= count),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
