import { describe, expect, it } from 'vitest';
import { channelSafe, QUOTE_CHARS, quoteForAlert } from '../../src/alerts/channel-safe-text.ts';

/** What a chat tool or a mail reader acts on: none of it may survive a quote. Pure: no channel needed. */
const ACTIVE = [
  /</, // Slack and Mattermost mentions and links, HTML
  />/,
  /@(here|channel|everyone|all)\b/i, // pings
  /@\w/, // a user or an address
  /\]\s*\(/, // markdown links
  /&(lt|gt|amp|#\d+);/i, // entities a renderer decodes back
  /[a-z]+:\/\//i, // what autolinkers link
  /\bwww\./i,
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u, // control, bidi and invisible
];

describe('quoteForAlert', () => {
  it.each([
    ['Slack mentions', '<!channel> <!here|here> <!everyone> <@U024BE7LH> <#C024BE7LR|general> <!subteam^S0|ops>'],
    ['Slack and Mattermost links', '<http://evil.example/login|your account is locked> <mailto:a@b.example|mail>'],
    ['plain pings', '@here @channel @everyone @all hi @ops-team'],
    ['HTML', '<a href="https://evil.example/">click</a><img src=x onerror=alert(1)><script>x</script>'],
    [
      'markdown links',
      '[click here](https://evil.example/) [x] (https://evil.example/) ![img](http://e.example/i.png)',
    ],
    ['entities', '&lt;!channel&gt; &#60;@U1&#62; &amp;lt;'],
    ['bare URLs', 'see https://evil.example/a and www.evil.example and ftp://files.example/x'],
    ['control and invisible characters', 'ok\u202e\u200bkcilc\nnext line\r\u0007\u2028\ufeff@\u200bhere'],
    ['a Teams mention', '<at>Everyone</at> @[everyone]'],
  ])('leaves nothing active of %s', (_, hostile) => {
    const quoted = quoteForAlert(hostile, []);
    for (const pattern of ACTIVE) expect(quoted, String(pattern)).not.toMatch(pattern);
    // The words stay readable: the look-alikes keep their place.
    expect(quoted.startsWith('“')).toBe(true);
  });

  it('bounds a long text to QUOTE_CHARS characters and says how much was left out', () => {
    const quoted = quoteForAlert('x'.repeat(18_458), []);
    expect(quoted).toBe(`“${'x'.repeat(QUOTE_CHARS)}…” (${18_458 - QUOTE_CHARS} more characters)`);
    // Characters, not UTF-16 units: an emoji is never cut in half.
    const emoji = quoteForAlert('😀'.repeat(QUOTE_CHARS + 1), []);
    expect(emoji).toBe(`“${'😀'.repeat(QUOTE_CHARS)}…” (1 more characters)`);
    expect(quoteForAlert('short and plain', [])).toBe('“short and plain”');
  });

  it('takes the secrets out before anything could change or cut one', () => {
    const secret = 'p@ss<word>-0123456789';
    expect(quoteForAlert(`HASH key ${secret} refused`, [secret])).toBe('“HASH key [redacted] refused”');
    // A secret straddling the cut is gone whole, not left as a prefix.
    const long = `${'a'.repeat(QUOTE_CHARS - 5)} ${secret}`;
    expect(quoteForAlert(long, [secret])).not.toContain('p＠ss');
  });
});

describe('channelSafe', () => {
  it("leaves recon's own words as they are", () => {
    const own =
      'recon: the nightly run of 2026-11-24 failed: 1 export batch given up (batch 3). See `recon runs` (nightly run 12) [redacted].';
    expect(channelSafe(own, 1_000)).toBe(own);
  });

  it('takes mention and link syntax out of anything else, and bounds it', () => {
    const sent = channelSafe('<!channel> @here [x](http://e.example/) '.repeat(100), 300);
    expect(sent).not.toMatch(/[<>@]|\]\(/);
    expect(Array.from(sent)).toHaveLength(301);
  });
});
