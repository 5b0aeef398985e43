import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { createArrivals } from './arrivals.ts';

export interface MailReceiver {
  /** smtp://user:password@127.0.0.1:port, as RECON_SMTP_URL. */
  readonly url: string;
  readonly password: string;
  /** Every message accepted, decoded, with the envelope's sender and recipients. */
  readonly messages: { readonly from: string; readonly to: string[]; readonly mail: ParsedMail }[];
  /** Resolves once `count` messages have been accepted. */
  messageCount(count: number): Promise<void>;
  close(): Promise<void>;
}

export const SMTP_USER = 'recon-alerts';
export const SMTP_PASSWORD = 'smtp-pa55word';

/**
 * An SMTP relay on loopback that wants a login (AUTH PLAIN/LOGIN over plain text, as a test may allow) and decodes
 * each message it accepts.
 */
export async function startMailReceiver(): Promise<MailReceiver> {
  const messages: { from: string; to: string[]; mail: ParsedMail }[] = [];
  const arrivals = createArrivals();
  const server = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
      const to = session.envelope.rcptTo.map((recipient) => recipient.address);
      simpleParser(stream)
        .then((mail) => {
          messages.push({ from, to, mail });
          arrivals.notify();
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${port}`,
    password: SMTP_PASSWORD,
    messages,
    messageCount: (count) => arrivals.until(() => messages.length >= count),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
