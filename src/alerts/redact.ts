/**
 * What an alert, its errors and recon's log lines may say about where alerts go: a webhook URL often carries its
 * token in its path (Slack's /services/T.../B.../XXXX) or query, so it is shown by its origin only.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname === '/' && parsed.search === '' ? `${parsed.origin}/` : `${parsed.origin}/…`;
  } catch {
    return '(an invalid URL)';
  }
}

/** Shorter strings are not taken out of text: a one-letter secret would blank every word that holds the letter. */
const SHORTEST_SECRET = 4;

/** `text` with every occurrence of each secret replaced by `[redacted]`: the last guard before a line leaves recon. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let scrubbed = text;
  // The longest first: a secret that contains another is taken out whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length >= SHORTEST_SECRET) scrubbed = scrubbed.split(secret).join('[redacted]');
  }
  return scrubbed;
}
