import { describe, expect, it } from 'vitest';
import { describeOrdersSource } from '../../src/orders/orders-source-name.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

describe('describeOrdersSource', () => {
  it.each([
    ['postgres://shop:s3cret@db.example:5432/shop', 'db.example:5432/shop'],
    ['postgresql://shop@db.example/shop?password=s3cret&sslmode=require', 'db.example/shop'],
    ['postgres://shop:s3cret@[::1]:6432/orders%20db', '[::1]:6432/orders db'],
    ['postgres://shop@db.example', 'db.example/shop'],
    ['postgres:///shop?host=/var/run/postgresql', '/var/run/postgresql/shop'],
  ])('names %s as %s, never with its password', (url, name) => {
    expect(describeOrdersSource(url)).toBe(name);
  });

  it.each(['host=db password=s3cret', 'mysql://shop:s3cret@db/shop', 's3cret'])(
    'refuses %j as CONFIG without echoing it',
    async (url) => {
      const message = await expectReconError(
        async () => describeOrdersSource(url),
        'CONFIG',
        'RECON_ORDERS_DATABASE_URL',
      );
      expect(message).not.toContain('s3cret');
    },
  );
});
