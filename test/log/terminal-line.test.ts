import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/create-logger.ts';
import { formatTerminalLine } from '../../src/log/terminal-line.ts';
import { memoryStream } from './memory-stream.ts';

describe('a log record on a terminal: one readable line', () => {
  let zone: string | undefined;
  beforeEach(() => {
    zone = process.env.TZ;
    // The time of day is the reader's own: fixed here so that the line is too.
    process.env.TZ = 'Europe/Paris';
  });
  afterEach(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  it('time of day, level, message, then the fields as key=value', () => {
    const record = {
      level: 'info',
      time: '2026-11-26T06:31:02.120Z',
      pid: 4242,
      hostname: 'rc-1',
      name: 'recon serve',
      delivery: '12',
      request: '7',
      bytes: 1234,
      msg: 'delivery received',
    };
    expect(formatTerminalLine(JSON.stringify(record))).toBe(
      '07:31:02 INFO  delivery received  delivery=12 request=7 bytes=1234\n',
    );
  });

  it('nested fields by their dotted path; text with spaces or quotes quoted; no fields, no trailing gap', () => {
    const record = {
      level: 'error',
      time: '2026-11-26T23:05:09.000Z',
      err: { code: 'NETWORK', message: 'http://127.0.0.1:9: connection refused' },
      counts: { matched: 3, missing_at_provider: 0 },
      reason: 'say "no"',
      suspect: false,
      batch: null,
      msg: 'nightly run failed',
    };
    expect(formatTerminalLine(JSON.stringify(record))).toBe(
      '00:05:09 ERROR nightly run failed  err.code=NETWORK err.message="http://127.0.0.1:9: connection refused" ' +
        'counts.matched=3 counts.missing_at_provider=0 reason="say \\"no\\"" suspect=false batch=null\n',
    );
    expect(formatTerminalLine(JSON.stringify({ level: 'warn', time: '2026-11-26T06:31:02Z', msg: 'draining' }))).toBe(
      '07:31:02 WARN  draining\n',
    );
  });

  it('a line that is not JSON is passed on as it is', () => {
    expect(formatTerminalLine('not json')).toBe('not json\n');
  });

  it('is what the logger writes when its stream is a terminal, and JSON when it is not', () => {
    const terminal = memoryStream({ isTTY: true });
    createLogger({ level: 'info', stream: terminal, name: 'recon serve' }).info({ run: '3' }, 'nightly run started');
    expect(terminal.text()).toMatch(/^\d\d:\d\d:\d\d INFO {2}nightly run started {2}run=3\n$/);
    const pipe = memoryStream();
    createLogger({ level: 'info', stream: pipe, name: 'recon serve' }).info({ run: '3' }, 'nightly run started');
    expect(JSON.parse(pipe.text())).toMatchObject({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      name: 'recon serve',
      pid: process.pid,
      run: '3',
      msg: 'nightly run started',
    });
  });
});
