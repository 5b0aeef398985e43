import { describe, expect, it } from 'vitest';
import { describeExecCode, EXEC_CODES, execCodeFamily, isRetryableExecCode, normalizeExecCode } from '@recon/protocol';

describe('exec codes', () => {
  it('retries only 5001, 5002, 5003 and 5005', () => {
    const retryable = Object.keys(EXEC_CODES).filter(isRetryableExecCode);
    expect(retryable).toEqual(['5001', '5002', '5003', '5005']);
    expect(isRetryableExecCode('5004')).toBe(false);
  });

  it('gives each code its family by the first digit', () => {
    expect(execCodeFamily('0003')).toBe('success');
    expect(execCodeFamily('2009')).toBe('bad-reference');
    expect(execCodeFamily('4015')).toBe('refused');
    expect(execCodeFamily('6001')).toBe('anti-fraud');
    expect(execCodeFamily('9999')).toBeUndefined();
    expect(execCodeFamily('abc')).toBeUndefined();
  });

  it('reads the export form without leading zeros', () => {
    expect(normalizeExecCode('0')).toBe('0000');
    expect(normalizeExecCode('2')).toBe('0002');
    expect(execCodeFamily('0')).toBe('success');
    expect(describeExecCode('4')).toBe('partially accepted');
    expect(describeExecCode('4999')).toBe('unlisted refused code');
  });
});
