import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRequest, encodeRequest, joinIds, ProtocolError, splitIds, type Params } from '@recon/protocol';

function decodeError(body: string): ProtocolError {
  try {
    decodeRequest(body);
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error(`no error for ${body}`);
}

describe('encodeRequest', () => {
  it('writes method, params[NAME] and zero-based params[CART][X][FIELD], URL-encoded', () => {
    const body = encodeRequest('payment', {
      OPERATIONTYPE: 'payment',
      DESCRIPTION: 'a b&c',
      EXTRADATA: undefined,
      CART: [{ NAME: 'x' }, { PRICE: '5' }],
    });
    expect([...new URLSearchParams(body)]).toEqual([
      ['method', 'payment'],
      ['params[OPERATIONTYPE]', 'payment'],
      ['params[DESCRIPTION]', 'a b&c'],
      ['params[CART][0][NAME]', 'x'],
      ['params[CART][1][PRICE]', '5'],
    ]);
  });
});

describe('decodeRequest', () => {
  it('reads literal brackets as well as encoded ones', () => {
    const { method, params } = decodeRequest(
      'method=refund&params[OPERATIONTYPE]=refund&params[CART][1][NAME]=b&params%5BCART%5D%5B0%5D%5BNAME%5D=a',
    );
    expect(method).toBe('refund');
    expect(params).toEqual({ OPERATIONTYPE: 'refund', CART: [{ NAME: 'a' }, { NAME: 'b' }] });
  });

  it('refuses a method that differs from OPERATIONTYPE (1002)', () => {
    const error = decodeError('method=capture&params[OPERATIONTYPE]=refund');
    expect(error.execCode).toBe('1002');
    expect(error.field).toBe('OPERATIONTYPE');
  });

  it('refuses a missing method (1001)', () => {
    expect(decodeError('params[OPERATIONTYPE]=refund').execCode).toBe('1001');
  });

  it.each([
    ['a key outside params[...]', 'method=refund&AMOUNT=1', 'AMOUNT'],
    ['a repeated parameter', 'method=refund&params[AMOUNT]=1&params[AMOUNT]=2', 'AMOUNT'],
    ['a repeated cart field', 'method=refund&params[CART][0][NAME]=a&params[CART][0][NAME]=b', 'CART[0][NAME]'],
    ['a gap in cart indexes', 'method=refund&params[CART][1][NAME]=a', 'CART[0]'],
    ['a non-canonical index', 'method=refund&params[CART][01][NAME]=a', 'params[CART][01][NAME]'],
    ['a scalar and a list under one name', 'method=refund&params[CART]=x&params[CART][0][NAME]=a', 'CART'],
  ])('refuses %s (1002, naming it)', (_, body, field) => {
    const error = decodeError(body);
    expect(error.execCode).toBe('1002');
    expect(error.field).toBe(field);
  });

  it('round-trips any params through encodeRequest', () => {
    const name = fc.stringMatching(/^[A-Z]{1,10}$/).filter((n) => n !== 'CART' && n !== 'OPERATIONTYPE');
    const item = fc.dictionary(name, fc.string(), { minKeys: 1 });
    const params = fc.record({
      scalars: fc.dictionary(name, fc.string()),
      cart: fc.array(item, { maxLength: 12 }),
    });
    fc.assert(
      fc.property(params, ({ scalars, cart }) => {
        const input: Params = { ...scalars, OPERATIONTYPE: 'payment', ...(cart.length > 0 ? { CART: cart } : {}) };
        expect(decodeRequest(encodeRequest('payment', input))).toEqual({ method: 'payment', params: input });
      }),
    );
  });
});

describe('ids', () => {
  it('joins and splits with ;', () => {
    expect(joinIds(['A', 'B', 'C'])).toBe('A;B;C');
    expect(splitIds('A;B;C')).toEqual(['A', 'B', 'C']);
  });
});
