import type { AlertCause } from '../db/schema.ts';

/** An alert as its raiser states it: what happened, in words for a person and in fields for a machine. */
export interface NewAlert {
  readonly cause: AlertCause;
  /**
   * What the alert is about, unique within its cause: the same cause and key raised again (by another process, at
   * the next check) is the same alert, sent once. A nightly run's date for the nightly causes; for the callback base,
   * the base and the day (or a probe's id), so that it is sent again on another day.
   */
  readonly key: string;
  /** One line: an e-mail's subject. */
  readonly title: string;
  /** What a person reads, in a chat tool or an e-mail: what happened, to what, and what to look at. */
  readonly text: string;
  /** The reason in a few words, for a machine or a filter. */
  readonly detail: string;
  readonly nightlyRunId?: string;
  readonly nightlyDate?: string;
  /** The nightly run's state when the alert was raised. */
  readonly state?: string;
  /** More structured fields for the webhook's body (strings), e.g. the callback base that was probed. */
  readonly fields?: Readonly<Record<string, string>>;
}
