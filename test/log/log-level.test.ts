import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/log/create-logger.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { memoryStream } from './memory-stream.ts';

it('RECON_LOG_LEVEL: info by default, any letter case, a wrong one a CONFIG error naming it', async () => {
  expect(loadConfig({}).log.level).toBe('info');
  expect(loadConfig({ RECON_LOG_LEVEL: ' Debug ' }).log.level).toBe('debug');
  expect(loadConfig({ RECON_LOG_LEVEL: 'SILENT' }).log.level).toBe('silent');
  await expectReconError(
    async () => loadConfig({ RECON_LOG_LEVEL: 'verbose' }),
    'CONFIG',
    'invalid environment variable RECON_LOG_LEVEL: ',
  );
});

it('writes the records of the level and above only; silent writes none', () => {
  const written = (level: 'warn' | 'debug' | 'silent') => {
    const stream = memoryStream();
    const log = createLogger({ level, stream, name: 'recon worker' });
    log.debug('a debug record');
    log.info('an info record');
    log.warn('a warning');
    log.error({ err: new Error('boom') }, 'an error');
    return stream
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { level: string }).level);
  };
  expect(written('warn')).toEqual(['warn', 'error']);
  expect(written('debug')).toEqual(['debug', 'info', 'warn', 'error']);
  expect(written('silent')).toEqual([]);
});
