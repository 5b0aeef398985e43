import { expect, it } from 'vitest';
import { escapeHtml } from '@recon/protocol';

it('escapes the five characters that end text or a quoted attribute, and nothing else', () => {
  expect(escapeHtml(`<a href="x" title='y'>Tom & Jerry</a>`)).toBe(
    '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;',
  );
  expect(escapeHtml('&amp;')).toBe('&amp;amp;');
  expect(escapeHtml('Zoë, 100 € — ok')).toBe('Zoë, 100 € — ok');
});
