import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeHash, signParams, verifyHash } from '@recon/protocol';
import { createHash } from 'node:crypto';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('computeHash', () => {
  it('matches the published test vector, and a HASH parameter changes nothing', () => {
    const vector = '77c71c1e70ea28525cf078537d22d1932922e3741ed83287b0dc0a117bf77999';
    expect(computeHash('password', { c: '3', a: '1', b: '2' })).toBe(vector);
    expect(computeHash('password', { c: '3', a: '1', b: '2', HASH: 'anything' })).toBe(vector);
  });

  it('flattens cart items to NAME[i][FIELD], fields sorted, indexes in numeric order (10 after 9)', () => {
    const cart = Array.from({ length: 11 }, (_, index) => ({ QUANTITY: '1', NAME: `item${index}` }));
    const expected = [
      'AMOUNT=5',
      ...cart.flatMap((item, index) => [`CART[${index}][NAME]=${item.NAME}`, `CART[${index}][QUANTITY]=1`]),
      'ORDERID=o',
    ];
    const secret = 's3cr3t';
    expect(computeHash(secret, { ORDERID: 'o', CART: cart, AMOUNT: '5' })).toBe(
      sha256(secret + expected.map((pair) => pair + secret).join('')),
    );
  });

  it('hashes raw UTF-8 values, not URL-encoded ones, and skips undefined parameters', () => {
    expect(computeHash('k', { NAME: 'é & ü', EXTRA: undefined })).toBe(sha256('kNAME=é & ük'));
  });

  it('does not depend on the order parameters are given in', () => {
    const entries = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[A-Z_]{1,12}$/), fc.string()), {
      selector: ([name]) => name,
    });
    fc.assert(
      fc.property(entries, fc.string(), (pairs, secret) => {
        const forward = Object.fromEntries(pairs);
        const backward = Object.fromEntries([...pairs].reverse());
        expect(computeHash(secret, backward)).toBe(computeHash(secret, forward));
      }),
    );
  });
});

describe('verifyHash', () => {
  const params = signParams('secret', { IDENTIFIER: 'm', AMOUNT: '100', CART: [{ NAME: 'a' }] });

  it('accepts what signParams signed, also upper-case hex', () => {
    expect(verifyHash('secret', params)).toBe(true);
    expect(verifyHash('secret', { ...params, HASH: (params['HASH'] as string).toUpperCase() })).toBe(true);
  });

  it('refuses a changed value, a changed cart, a wrong secret, a missing or short HASH', () => {
    expect(verifyHash('secret', { ...params, AMOUNT: '101' })).toBe(false);
    expect(verifyHash('secret', { ...params, CART: [{ NAME: 'b' }] })).toBe(false);
    expect(verifyHash('other', params)).toBe(false);
    expect(verifyHash('secret', { ...params, HASH: undefined })).toBe(false);
    expect(verifyHash('secret', { ...params, HASH: 'abc' })).toBe(false);
  });
});
