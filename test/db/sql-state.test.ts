import { describe, expect, it } from 'vitest';
import {
  isDatabaseUnavailable,
  isTransientDatabaseError,
  isUniqueViolation,
  SQL_STATE,
  sqlState,
} from '../../src/db/sql-state.ts';

/** An error shaped as node-postgres and PGlite throw them: the SQLSTATE in `code`. */
function databaseError(code: string, message = 'database error'): Error {
  return Object.assign(new Error(message), { code });
}

describe('sqlState', () => {
  it('reads a SQLSTATE, and nothing that is not one', () => {
    expect(sqlState(databaseError('23505'))).toBe('23505');
    expect(sqlState(databaseError('57P01'))).toBe('57P01');
    expect(sqlState(databaseError('ECONNREFUSED'))).toBeUndefined();
    expect(sqlState(new Error('no code'))).toBeUndefined();
    expect(sqlState(undefined)).toBeUndefined();
    expect(sqlState(null)).toBeUndefined();
  });
});

describe('isUniqueViolation', () => {
  it('is SQLSTATE 23505 and only that', () => {
    expect(isUniqueViolation(databaseError(SQL_STATE.uniqueViolation))).toBe(true);
    expect(isUniqueViolation(databaseError('23503'))).toBe(false);
    expect(isUniqueViolation(new Error('duplicate key value violates unique constraint'))).toBe(false);
  });
});

describe('isTransientDatabaseError', () => {
  it('takes a lost or refused connection, a shutdown, a deadlock or a serialization failure as transient', () => {
    for (const state of ['08006', '40001', '40P01', '53300', '57P01'])
      expect(isTransientDatabaseError(databaseError(state)), state).toBe(true);
    expect(isTransientDatabaseError(databaseError('ECONNREFUSED'))).toBe(true);
    expect(isTransientDatabaseError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isTransientDatabaseError(new AggregateError([databaseError('ECONNRESET')], 'all failed'))).toBe(true);
  });

  it('looks through causes, but takes a constraint or a bug as the work failing', () => {
    expect(isTransientDatabaseError(new Error('load failed', { cause: databaseError('40001') }))).toBe(true);
    expect(isTransientDatabaseError(databaseError(SQL_STATE.uniqueViolation))).toBe(false);
    expect(isTransientDatabaseError(new Error('load failed', { cause: databaseError('22P02') }))).toBe(false);
    expect(isTransientDatabaseError(new TypeError('x is undefined'))).toBe(false);
  });
});

describe('isDatabaseUnavailable', () => {
  it('takes every way a server refuses or drops connections as an outage', () => {
    for (const state of [
      '08000',
      '08001',
      '08003',
      '08004',
      '08006',
      '08P01',
      '57P01',
      '57P02',
      '57P03',
      '57P05',
      '53300',
    ])
      expect(isDatabaseUnavailable(databaseError(state)), state).toBe(true);
    expect(
      isDatabaseUnavailable(databaseError('55000', 'database "recon" is not currently accepting connections')),
    ).toBe(true);
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
      expect(isDatabaseUnavailable(databaseError(code)), code).toBe(true);
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      'Client has encountered a connection error and is not queryable',
    ])
      expect(isDatabaseUnavailable(new Error(message)), message).toBe(true);
  });

  it('reads what any library reported: a cause, an aggregate, or the plain copy pg-boss emits', () => {
    expect(
      isDatabaseUnavailable(new Error('cannot connect to PostgreSQL', { cause: databaseError('ECONNREFUSED') })),
    ).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([databaseError('ECONNREFUSED')], 'all failed'))).toBe(true);
    // pg-boss: `{ ...error, message, stack, queue, worker }`.
    const copied = { code: '57P01', message: 'terminating connection due to administrator command', stack: 'at ...' };
    expect(isDatabaseUnavailable({ ...copied, queue: 'recon-delivery-ingest', worker: 'w1' })).toBe(true);
    expect(isDatabaseUnavailable({ message: 'Connection terminated unexpectedly', stack: 'at ...' })).toBe(true);
  });

  it('takes the work failing, a deadlock or another 55000 as no outage', () => {
    for (const state of ['23505', '22P02', '40001', '40P01', '42P01', '57014', '53100'])
      expect(isDatabaseUnavailable(databaseError(state)), state).toBe(false);
    expect(isDatabaseUnavailable(databaseError('55000', 'cannot refresh materialized view concurrently'))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
    expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
  });

  it('is transient too, as are deadlocks and serialization failures', () => {
    expect(
      isTransientDatabaseError(databaseError('55000', 'database "x" is not currently accepting connections')),
    ).toBe(true);
    expect(isTransientDatabaseError(databaseError('57P03'))).toBe(true);
  });
});
