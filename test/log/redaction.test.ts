import { describe, expect, it } from 'vitest';
import { ReconError } from '../../src/errors.ts';
import { createLogger } from '../../src/log/create-logger.ts';
import { computeHash } from '@recon/protocol';
import { memoryStream } from './memory-stream.ts';

const SECRET = 'merchant-secret-42';
const DB_PASSWORD = 'hunter2-db';
const HASH = computeHash(SECRET, { IDENTIFIER: 'SHOP', OPERATIONTYPE: 'payment', AMOUNT: '1000' });
const EMAIL = 'jeanne.martin@example.org';
const OTHER_EMAIL = 'card.holder+tag@mail.example.co.uk';
const BEARER = 'Bearer abcdefghij';
const DATABASE_URL = `postgres://recon:${DB_PASSWORD}@db.internal:5432/recon`;

/** Everything that must never reach a log line. */
const NEVER = [SECRET, DB_PASSWORD, HASH, HASH.toUpperCase(), EMAIL, OTHER_EMAIL, BEARER, 'abcdefghij'];

function loggedLines(log: (logger: ReturnType<typeof createLogger>) => void, isTTY = false): string {
  const stream = memoryStream({ isTTY });
  const logger = createLogger({ level: 'trace', stream, name: 'recon test', secrets: [SECRET, DB_PASSWORD] });
  log(logger);
  return stream.text();
}

describe('a log line never holds a secret, a HASH or an e-mail', () => {
  const writeAll = (logger: ReturnType<typeof createLogger>) => {
    // Fields named as the protocol and recon's configuration name them, at the top and nested.
    logger.info(
      {
        secret: SECRET,
        SECRET,
        HASH,
        hash: HASH,
        EMAIL,
        email: OTHER_EMAIL,
        CLIENTEMAIL: EMAIL,
        MAILTO: OTHER_EMAIL,
        password: DB_PASSWORD,
        authorization: BEARER,
        DATABASE_URL,
        token: 'abcdefghij',
        delivery: '12',
      },
      'fields by name',
    );
    logger.warn({ notification: { HASH, CLIENTEMAIL: EMAIL, fields: { HASH, email: EMAIL } } }, 'nested fields');
    logger.info({ headers: { authorization: BEARER } }, 'headers');
    // The same values under names no rule knows, in messages and in errors: the text net catches them.
    logger.error(
      { err: new ReconError('SERVICE_ERROR', `refused HASH=${HASH} for ${EMAIL} (key ${SECRET})`) },
      'service error',
    );
    logger.error({ err: new Error(`cannot connect to ${DATABASE_URL}`) }, 'connection');
    logger.info({ detail: `${EMAIL.replace('@', '%40')} ${HASH.toUpperCase()}` }, `sent ${HASH} to ${OTHER_EMAIL}`);
    logger.child({ customer: EMAIL, signature: HASH }).info('child bindings');
  };

  for (const [format, isTTY] of [
    ['JSON lines', false],
    ['terminal lines', true],
  ] as const) {
    it(`${format}: none of the values, every record still written with what is not secret`, () => {
      const text = loggedLines(writeAll, isTTY);
      for (const value of NEVER) expect(text).not.toContain(value);
      expect(text).not.toMatch(/[0-9a-f]{64}/i);
      expect(text).not.toMatch(/@example|%40example/);
      const lines = text.trimEnd().split('\n');
      expect(lines).toHaveLength(7);
      // What is no secret survives: ids, the host of a connection string, the error's code.
      expect(text).toContain('12');
      expect(text).toContain('db.internal:5432/recon');
      expect(text).toContain('SERVICE_ERROR');
      expect(text).toContain('[Redacted]');
    });
  }

  it('keeps a record whole, fields and message, when it holds nothing to hide', () => {
    const text = loggedLines((logger) => logger.info({ delivery: '12', rows: 3 }, 'delivery ingested'));
    expect(JSON.parse(text)).toMatchObject({ level: 'info', msg: 'delivery ingested', delivery: '12', rows: 3 });
  });
});
