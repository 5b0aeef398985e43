import { describe, expect, it } from 'vitest';
import { callbackEndpoint } from '../../src/receive/callback-url.ts';
import { generateToken, TOKEN_PATTERN } from '../../src/receive/export-token.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

describe('callbackEndpoint', () => {
  it('gives every character the base URL leaves of the 32 to the token', () => {
    expect(callbackEndpoint('https://shop.example/cb/')).toEqual({
      base: 'https://shop.example/cb/',
      path: '/cb/',
      tokenLength: 8,
    });
    expect(callbackEndpoint('http://10.0.0.7:8090/')).toEqual({
      base: 'http://10.0.0.7:8090/',
      path: '/',
      tokenLength: 11,
    });
  });

  it('spells the base as a URL does, so that base + token is one', () => {
    expect(callbackEndpoint('https://SHOP.example')).toEqual({
      base: 'https://shop.example/',
      path: '/',
      tokenLength: 11,
    });
    expect(callbackEndpoint('https://a.example/x').path).toBe('/x');
  });

  it.each([
    ['https://payments.shop.example/cb/', 'leaves 0 of'],
    ['https://shop.example/cb/x', 'leaves 7 of'],
    ['https://shop.example/?t=', 'must not have a query'],
    ['https://shop.example/#', 'must not have a query or fragment'],
    ['ftp://shop.example/', 'ftp: is not http: or https:'],
    ['not a url', 'is not a URL'],
    ['https://user:pw@s.example/', 'must not carry credentials'],
  ])('refuses %s with a CONFIG error naming RECON_CALLBACK_BASE_URL', async (baseUrl, why) => {
    await expectReconError(async () => callbackEndpoint(baseUrl), 'CONFIG', 'invalid RECON_CALLBACK_BASE_URL', why);
  });
});

describe('generateToken', () => {
  it('draws base62 characters of the length asked, every one of the 62 in use', () => {
    const tokens = Array.from({ length: 2000 }, () => generateToken(11));
    for (const token of tokens) {
      expect(token).toHaveLength(11);
      expect(token).toMatch(TOKEN_PATTERN);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(new Set(tokens.join('')).size).toBe(62);
  });
});
