import { describe, expect, it } from 'vitest';
import { isTransientDatabaseError, isUniqueViolation, SQL_STATE, sqlState } from '../../src/db/sql-state.ts';

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
