/**
 * What a normalization rule returns instead of a value when the raw text breaks it. Rules return it rather than
 * throw: a bad value is an ordinary outcome on the hot path (it becomes a rejected row), and throwing per value
 * would make exceptions the control flow of a million-row loop.
 *
 * `reason` quotes the bad value and says what was expected; the caller prefixes the column name.
 */
export class RuleViolation {
  readonly reason: string;

  constructor(reason: string) {
    this.reason = reason;
  }
}

const MAX_QUOTED_LENGTH = 40;

/** The value as it appears in a reason: JSON-quoted (so control characters cannot break the line), cut when long. */
export function quoteValue(raw: string): string {
  if (raw.length <= MAX_QUOTED_LENGTH) return JSON.stringify(raw);
  return `${JSON.stringify(raw.slice(0, MAX_QUOTED_LENGTH))}... (${raw.length} characters)`;
}
