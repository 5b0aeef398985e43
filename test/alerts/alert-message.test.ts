import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { alertMail, webhookBody } from '../../src/alerts/alert-message.ts';
import { quoteForAlert } from '../../src/alerts/channel-safe-text.ts';
import { failedRunAlert } from '../../src/alerts/nightly-alert-text.ts';
import { packageRoot } from '../../src/package-root.ts';
import { readMarkdown, readText } from '../docs/markdown.ts';

/** How an alert reads on each channel, and the operator's page showing it as it is. Pure: no database. */
describe('an alert on the webhook and in an e-mail', () => {
  const alert = failedRunAlert(
    {
      nightlyRunId: '12',
      runDate: '2026-11-24',
      state: 'failed',
      failure:
        '1 export batch(es) given up, their orders reconciled without them: batch 3 (no export delivered within 3600 s)',
      reconciliationRunId: '41',
      suspectReason: null,
      givenUp: [{ batch: 3, failure: 'no export delivered within 3600 s' }],
    },
    (text) => quoteForAlert(text, []),
  );
  const row = {
    alert_id: '7',
    cause: alert.cause,
    key: alert.key,
    nightly_run_id: alert.nightlyRunId ?? null,
    title: alert.title,
    text: alert.text,
    details: { ...alert.fields, detail: alert.detail, nightlyDate: alert.nightlyDate!, state: alert.state! },
    raised_at: new Date('2026-11-24T06:31:00Z'),
  };

  it('is the example of docs/operations.md, field for field', () => {
    const page = readMarkdown(readText(path.join(packageRoot(), 'docs', 'operations.md')));
    const examples = page.blocks.filter((block) => block.language === 'json');
    expect(examples.map((block) => JSON.parse(block.text) as unknown)).toContainEqual(webhookBody(row, []));
  });

  it('mails the title as subject, then the text and every field one a line but the detail, which the text says', () => {
    expect(alert.text).toContain(alert.detail);
    expect(alertMail(row, [])).toEqual({
      subject: 'recon: the nightly run of 2026-11-24 failed',
      text:
        `${alert.text}\n\n` +
        'cause: nightly_failed\nkey: 2026-11-24\nnightlyDate: 2026-11-24\nrunId: 12\nstate: failed\n' +
        'reconciliationRunId: 41\nraisedAt: 2026-11-24T06:31:00.000Z\nalertId: 7\nsource: recon\n',
    });
  });

  it('sends no mention or link syntax and nothing unbounded, even in a row an earlier version raised', () => {
    const hostile = '<!channel> @here <a href="http://evil.example/">click</a> [x](http://evil.example/) '.repeat(200);
    const body = webhookBody({ ...row, text: `recon: ${hostile}`, details: { detail: hostile } }, []);
    for (const field of ['text', 'detail']) {
      const sent = body[field]!;
      expect(sent).not.toMatch(/[<>@]|\]\(/);
      expect(sent.length).toBeLessThanOrEqual(field === 'text' ? 1_001 : 401);
    }
  });

  it('takes the secrets out of every field', () => {
    const body = webhookBody({ ...row, text: 'HASH key s3cret-key', details: { detail: 's3cret-key' } }, [
      's3cret-key',
    ]);
    expect(body).toMatchObject({ text: 'HASH key [redacted]', detail: '[redacted]' });
  });
});
