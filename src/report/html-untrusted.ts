import { html, type Html } from './html-template.ts';
import { bounded, NAME_SHOWN, TEXT_SHOWN } from './untrusted-text.ts';

/**
 * Text anybody may have typed, as the html page shows it: escaped (by the template), bounded (see untrusted-text.ts)
 * and isolated in a <bdi>, so that right-to-left text, or an override (U+202E) left open, turns round neither the
 * words around it nor the rest of its line: "acknowledged by ‮alice, 2026-11-20" must still read left to right.
 */
export function untrusted(text: string | null | undefined, shown: number = TEXT_SHOWN): Html | null {
  return text === null || text === undefined ? null : html`<bdi>${bounded(text, shown)}</bdi>`;
}

/** Who acted, as actedBy writes it (the login, and the name given beside it when it differs), each part isolated. */
export function actedByHtml(name: string | null, login: string | null): Html {
  if (login === null) return untrusted(name, NAME_SHOWN) ?? html`?`;
  return name === null || name === login
    ? html`${untrusted(login, NAME_SHOWN)}`
    : html`${untrusted(name, NAME_SHOWN)} (login ${untrusted(login, NAME_SHOWN)})`;
}
