/**
 * Who acted on an exception, as people read it: the login, which nobody chooses, and the name given beside it when
 * it differs (`--by` or the function's actor is any text a caller types). A name alone could claim anybody.
 */
export function actedBy(name: string | null, login: string | null): string {
  if (login === null) return name ?? '?';
  return name === null || name === login ? login : `${name} (login ${login})`;
}
