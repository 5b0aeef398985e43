import { scrubSecrets } from './redact.ts';

/**
 * How many characters of a stranger's text an alert quotes: enough to recognize the failure, too few to carry a
 * page of someone else's words into a chat channel or an inbox.
 */
export const QUOTE_CHARS = 160;

/**
 * What a chat tool or a mail reader would act on, replaced by look-alikes that are plain text everywhere:
 * `<` and `>` open Slack's and Mattermost's mentions and links (`<!channel>`, `<@U123>`, `<http://x|click>`) and
 * HTML; `@` pings (`@here`, `@channel`, `@everyone`, an address); `&` starts an entity that a renderer decodes back
 * into `<`; a backtick closes the alert's own code spans. A markdown link's `](` loses its bracket (MARKDOWN_LINK).
 */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  '<': '‹',
  '>': '›',
  '@': '＠',
  '&': '＆',
  '`': "'",
  '“': '"',
  '”': '"',
};
const SYNTAX = /[<>@&`“”]/g;
/** `[text](url)` is a link in markdown (Teams, Mattermost, Discord); `[text]` alone is text, as in `[redacted]`. */
const MARKDOWN_LINK = /\]\s*\(/g;
/** Control and invisible characters (bidi overrides, zero-width joiners), and line breaks: one line of text only. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
/** A URL's scheme and `www.` are what autolinkers look for: broken, the address reads the same and links nowhere. */
const AUTOLINK = /(:)\/\/|\b(www)\./gi;

/**
 * Text recon did not write (a file's header, an error's message from a library or the service, an answer's
 * header, an order id), made safe to quote in an alert: the secrets taken out first (before anything could split
 * or change one), one line, no mention, link or markup syntax for any channel, at most `maxChars` characters,
 * between quotation marks so that a reader tells it from recon's own words.
 */
export function quoteForAlert(text: string, secrets: readonly string[], maxChars: number = QUOTE_CHARS): string {
  const plain = defuse(scrubSecrets(text, secrets).replace(INVISIBLE, ' ').replace(/\s+/g, ' ').trim());
  const characters = Array.from(plain);
  if (characters.length <= maxChars) return `“${plain}”`;
  const cut = characters.slice(0, maxChars).join('').trimEnd();
  return `“${cut}…” (${characters.length - maxChars} more characters)`;
}

/**
 * The last guard on every string an alert sends, recon's own words included (and an alert raised by an earlier
 * version): no mention or link syntax, and at most `maxChars` characters. Recon's own words hold none of what it
 * replaces, so they pass unchanged.
 */
export function channelSafe(text: string, maxChars: number): string {
  const safe = text.replace(/[<>@]/g, (character) => LOOK_ALIKES[character]!).replace(MARKDOWN_LINK, '］(');
  const characters = Array.from(safe);
  return characters.length <= maxChars ? safe : `${characters.slice(0, maxChars).join('')}…`;
}

function defuse(text: string): string {
  return text
    .replace(SYNTAX, (character) => LOOK_ALIKES[character]!)
    .replace(MARKDOWN_LINK, '］(')
    .replace(AUTOLINK, (_, colon?: string, www?: string) => (colon ? ':⁄⁄' : `${www}․`));
}
