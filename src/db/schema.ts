import type { ColumnType, Generated } from 'kysely';

/**
 * Row types of recon's tables as Kysely sees them. `pg` returns bigint as string; money columns are
 * typed as string on select so that nothing converts them through a float by accident.
 */
type Money = ColumnType<string, bigint | string, bigint | string>;
/** An amount in the currency's unit (numeric, exact: 12.34 EUR), as the reporting views show it beside Money. */
type UnitAmount = string;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamp the database fills by default, which an insert may still set. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface FilesTable {
  file_id: Generated<string>;
  name: string;
  sha256: string;
  size_bytes: ColumnType<string, number | bigint | string, number | bigint | string>;
  compression: 'zip' | 'gzip' | 'bzip2' | 'none';
  received_at: DefaultedTimestamp;
  finished_at: Timestamp | null;
  status: 'loaded' | 'failed';
  rows_total: number | null;
  rows_inserted: number | null;
  rows_updated: number | null;
  rows_unchanged: number | null;
  rows_rejected: number | null;
  /** Rows of transactions a file asked for later had written already: left as they were (migration 0032). */
  rows_outdated: number | null;
  /** When recon asked the service for what the file holds; null for a file given to recon ingest. */
  asked_at: Timestamp | null;
  error_code: string | null;
  error: string | null;
  /** How the file reached recon (migration 0015); required on insert: there is no default. */
  arrival: FileArrivalKind;
  /** The delivery whose ingest wrote this row; null unless arrival is 'delivery'. */
  delivery_id: string | null;
}

export type FileArrivalKind = 'ingest' | 'backfill' | 'delivery';

export interface TransactionsTable {
  transaction_id: string;
  identifier: string | null;
  order_id: string | null;
  operation_type: string | null;
  occurred_at: Timestamp | null;
  amount_minor: Money | null;
  currency: string | null;
  exec_code: string | null;
  fees_minor: Money | null;
  schedule_index: number | null;
  schedule_count: number | null;
  retry_index: number | null;
  retry_count: number | null;
  client_email: string | null;
  client_address: string | null;
  card_full_name: string | null;
  card_type: string | null;
  card_country: string | null;
  three_d_secure: string | null;
  three_ds_global_status: string | null;
  rule_applied: string | null;
  extra: ColumnType<Record<string, string>, string, string>;
  /** See migration 0011: a digest of what last wrote the row, null when unknown. */
  row_digest: string | null;
  file_id: string;
  entry: string | null;
  line: number;
  updated_at: DefaultedTimestamp;
}

export interface RejectedRowsTable {
  rejected_row_id: Generated<string>;
  file_id: string;
  entry: string | null;
  line: number;
  raw: string;
  reason: string;
}

export type OrderStatus = 'paid' | 'authorized' | 'cancelled' | 'refunded' | 'partially_refunded';
export type PaymentMethod = 'instalment' | 'wallet';

export interface OrderImportsTable {
  import_id: Generated<string>;
  source: 'file' | 'database';
  name: string;
  sha256: string | null;
  started_at: DefaultedTimestamp;
  finished_at: Timestamp | null;
  status: 'loaded' | 'failed';
  rows_total: number | null;
  rows_inserted: number | null;
  rows_updated: number | null;
  rows_unchanged: number | null;
  rows_rejected: number | null;
  error_code: string | null;
  error: string | null;
}

export interface OrdersTable {
  order_id: string;
  amount_minor: Money;
  currency: string;
  status: OrderStatus;
  refunded_minor: ColumnType<string, bigint | string | undefined, bigint | string>;
  payment_method: PaymentMethod;
  created_at: Timestamp;
  updated_at: DefaultedTimestamp;
  import_id: string;
  line: number | null;
}

export interface RejectedOrderRowsTable {
  rejected_row_id: Generated<string>;
  import_id: string;
  line: number;
  raw: string;
  reason: string;
}

export const NOTIFICATION_INVALID_REASONS = ['hash_mismatch', 'unknown_identifier', 'missing_identifier'] as const;
export type NotificationInvalidReason = (typeof NOTIFICATION_INVALID_REASONS)[number];

export interface NotificationsTable {
  notification_id: Generated<string>;
  received_at: DefaultedTimestamp;
  transaction_id: string | null;
  order_id: string | null;
  operation_type: string | null;
  exec_code: string | null;
  amount_minor: Money | null;
  currency: string | null;
  hash_valid: boolean;
  /** Why hash_valid is false (null when true): the HASH does not match, or IDENTIFIER names no account or is missing. */
  invalid_reason: NotificationInvalidReason | null;
  /** NUL characters written as the six characters `\u0000`. */
  params: ColumnType<Record<string, string>, string, string>;
  /** The query string or body as first received; null for notifications stored before it was kept. */
  raw: Uint8Array | null;
  /** sha256 of `params` as jsonb text: with hash_valid, what makes a copy the same notification (unique). */
  params_digest: Uint8Array;
  /** How many times it was received, copies the service sent again and replays included (bigint as text). */
  receipts: Generated<string>;
  /** When it was last received; received_at is the first time. */
  last_received_at: DefaultedTimestamp;
}

export const VERDICT_STATUSES = [
  'currency_mismatch',
  'notification_conflict',
  'duplicate_payment',
  'over_refunded',
  'status_mismatch',
  'amount_mismatch',
  'approval_expired',
  'capture_expired',
  'capture_at_risk',
  'pending',
  'missing_at_provider',
  'matched',
  'unknown_order',
] as const;

export type VerdictStatus = (typeof VERDICT_STATUSES)[number];
export type Lifecycle = 'new' | 'persisting' | 'resolved';

export interface ReconciliationRunsTable {
  run_id: Generated<string>;
  as_of: Timestamp;
  scope: ColumnType<RunScopeJson, string, string>;
  tolerance_minor: Money;
  grace_hours: number;
  started_at: DefaultedTimestamp;
  finished_at: Timestamp | null;
  orders_in_scope: number | null;
  counts: ColumnType<Partial<Record<VerdictStatus, number>> | null, string | null, string | null>;
  /** The first 100 of them; not_found_count says how many. */
  not_found: ColumnType<string[], string[] | undefined, string[]>;
  not_found_count: ColumnType<number, number | undefined, number>;
  suspect: Generated<boolean>;
  suspect_reason: string | null;
  kind: ColumnType<RunKind, RunKind | undefined, RunKind>;
  nightly_run_id: string | null;
  description: string;
  inputs_seen_before: Timestamp | null;
  verdicts_computed: number | null;
  verdicts_changed: number | null;
  pruned_at: Timestamp | null;
}

export const RUN_KINDS = ['nightly', 'backfill', 'manual'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** Never the ORDERIDs themselves: a named scope's are in recon.run_scope_orders (or a nightly run's requests). */
export type RunScopeJson =
  { kind: 'all' } | { kind: 'orders'; count: number } | { kind: 'created_since'; since: string };

/** The ORDERIDs a run over named orders was asked to judge (not a nightly run's: its export requests hold them). */
export interface RunScopeOrdersTable {
  run_id: string;
  order_id: string;
}

export interface VerdictsTable {
  run_id: string;
  order_id: string;
  known_order: boolean;
  status: VerdictStatus;
  lifecycle: Lifecycle | null;
  first_seen_run_id: string | null;
  first_seen_at: Timestamp | null;
  expected_minor: Money;
  settled_minor: Money;
  delta_minor: Money;
  currency: string | null;
  transaction_ids: string[];
  warnings: string[] | null;
  /** Null for a matched verdict. Amounts inside are strings of minor units (see verdicts-sql.ts), never JSON numbers. */
  explanation: ColumnType<unknown, string | null, string | null>;
  /** When the passing of time alone may change the verdict ('-infinity': at the next run); null: never. */
  recheck_at: Timestamp | null;
  /**
   * The first finished run after this version's own that judged the order again (and so found it unchanged), set
   * only where that moves the lifecycle on: new becomes persisting, resolved becomes nothing. Null otherwise.
   */
  rejudged_run_id: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * The money the verdict puts at risk, minor units (the rule: reporting.reconciliation.at_risk_minor); null only
   * for a version written before it was stored whose explanation lacked the figures.
   */
  at_risk_minor: Money | null;
  /** The explanation's reason, generated from it by the database (migration 0040): never written. */
  reason: ColumnType<string | null, never, never>;
}

/** A verdict that no longer holds, from its run until the run that replaced or removed it (until_run_id). */
export interface VerdictHistoryTable extends Omit<VerdictsTable, 'recheck_at' | 'reason'> {
  until_run_id: string;
}

export interface RunTotalsTable {
  run_id: string;
  currency: string;
  orders: number;
  unknown_orders: number;
  expected_minor: Money;
  settled_minor: Money;
}

/** A run's bridge per currency and status, written when it finishes (src/reconcile/run-status-totals.ts). */
export interface RunStatusTotalsTable {
  run_id: string;
  currency: string;
  status: VerdictStatus;
  verdicts: number;
  orders: number;
  unknown_orders: number;
  expected_minor: Money;
  settled_minor: Money;
  delta_minor: Money;
  /** Of the verdicts whose money at risk is known; at_risk_unknown counts the others. */
  at_risk_minor: Money;
  at_risk_unknown: number;
}

/** What each account settled through a run's verdicts, written when it finishes (src/reconcile/run-account-totals.ts). */
export interface RunAccountTotalsTable {
  run_id: string;
  identifier: string | null;
  currency: string | null;
  orders: number;
  transactions: number;
  paid_minor: Money;
  refunded_minor: Money;
  /** The fees of those transactions (migration 0034). */
  fees_minor: Money;
}

/**
 * A slice's part of a running run's totals per account (migration 0035), summed into recon.run_account_totals when
 * the run finishes and deleted then.
 */
export type RunAccountPartsTable = RunAccountTotalsTable;

/**
 * A change of a running run's verdicts (migration 0036), kept apart by a run written slice by slice over current
 * verdicts, applied when the run finishes and deleted then. Its columns are the verdict statement's rows'.
 */
export interface RunVerdictChangesTable {
  run_id: string;
  change: 'new' | 'changed' | 'recheck' | 'removed';
  order_id: string;
  known: boolean | null;
  verdict: string | null;
  lifecycle: string | null;
  first_seen_run_id: string | null;
  first_seen_at: Timestamp | null;
  expected: Money | null;
  settled: Money | null;
  delta: Money | null;
  currency: string | null;
  transaction_ids: string[] | null;
  warnings: string[] | null;
  explanation: unknown;
  at_risk: Money | null;
  recheck_at: Timestamp | null;
}

/**
 * The money of a finished run's verdicts its bridge does not count in the currency it was paid in (migration 0034):
 * currency_mismatch orders', unknown ORDERIDs', and transactions without a currency.
 */
export interface RunCurrencyMovesTable {
  run_id: string;
  /** The transactions' currency; null for those without one. */
  currency: string | null;
  /** The bridge the verdicts are in: their currency, XXX when none. */
  verdict_currency: string;
  known_order: boolean;
  orders: number;
  transactions: number;
  paid_minor: Money;
  refunded_minor: Money;
}

/**
 * What the transactions of one quarter hour (UTC) and currency moved, kept by triggers as transactions are written
 * (migration 0038): the sums reporting.settlement_daily groups into days. Sums are numeric, as the view's are; only
 * the triggers write.
 */
export interface MoneyMovedTable {
  quarter: ColumnType<Date, never, never>;
  currency: ColumnType<string | null, never, never>;
  counted: ColumnType<string, never, never>;
  transactions: ColumnType<string, never, never>;
  payments: ColumnType<string, never, never>;
  refunds: ColumnType<string, never, never>;
  paid_minor: ColumnType<string, never, never>;
  refunded_minor: ColumnType<string, never, never>;
  fees_minor: ColumnType<string, never, never>;
}

/** COMPRESSION as sent in a getTransactions request. */
export type ExportCompression = 'zip' | 'gzip' | 'bzip';
export type ExportRequestState = 'requested' | 'delivered' | 'ingested' | 'failed' | 'timed_out' | 'given_up';

export interface ExportRequestsTable {
  request_id: Generated<string>;
  /** Base62, the end of the request's CALLBACKURL. */
  token: string;
  nightly_run_id: string | null;
  order_ids: string[];
  compression: ExportCompression;
  attempt: ColumnType<number, number | undefined, number>;
  state: ColumnType<ExportRequestState, ExportRequestState | undefined, ExportRequestState>;
  requested_at: DefaultedTimestamp;
  expires_at: Timestamp;
  delivered_at: Timestamp | null;
  ingested_at: Timestamp | null;
  failure: string | null;
  /** The nightly run's batch this request asks for (null outside nightly runs); attempts of a batch share it. */
  batch: number | null;
  /** When a process took the request to send it; null until then (or after a sending that failed). */
  sent_at: Timestamp | null;
  /** A request whose sending failed without reaching the service is sent again from then on. */
  retry_at: Timestamp | null;
  /** The account that signs the request (a group's first account for SCOPE=CLIENTSGROUP); null before accounts. */
  identifier: string | null;
  /** SCOPE as sent: the account alone, or its whole group; null before accounts were recorded. */
  scope: ExportScope | null;
}

/** getTransactions' SCOPE: one account, or the group it belongs to. */
export type ExportScope = 'CLIENT' | 'CLIENTSGROUP';

/** A processing account as recon was last started with it (RECON_ACCOUNTS), never its secret. */
export interface AccountsTable {
  identifier: string;
  account_group: string | null;
  /** Null: the account serves any method. */
  payment_methods: PaymentMethod[] | null;
  /** When the list last changed: a run over all orders after that judges every order again. */
  changed_at: DefaultedTimestamp;
}

/** A running worker process (recon serve or recon worker), seen again every few seconds. */
export interface WorkersTable {
  worker_id: string;
  host: string;
  pid: number;
  started_at: Timestamp;
  seen_at: Timestamp;
}

/** A probe of RECON_CALLBACK_BASE_URL: posted by recon to its own public callback base, received by its receiver. */
export interface CallbackProbesTable {
  probe_id: Generated<string>;
  token: string;
  callback_base_url: string;
  reason: 'serve start' | 'nightly run';
  nightly_run_id: string | null;
  sent_at: Timestamp;
  received_at: Timestamp | null;
  /** Null while the prober waits for its answer. */
  reachable: boolean | null;
  detail: string | null;
  checked_at: Timestamp | null;
}

export type DeliveryState = 'received' | 'ingested' | 'failed';

export interface DeliveriesTable {
  delivery_id: Generated<string>;
  request_id: string;
  received_at: DefaultedTimestamp;
  sha256: string;
  bytes: ColumnType<string, number | bigint | string, number | bigint | string>;
  content_type: string | null;
  filename: string | null;
  /** The text fields of a multipart upload. */
  fields: ColumnType<Record<string, string>, string | undefined, string>;
  state: ColumnType<DeliveryState, DeliveryState | undefined, DeliveryState>;
  file_id: string | null;
  /** Ingest attempts started. */
  attempts: ColumnType<number, number | undefined, number>;
  /** An attempt started and has not ended: if no live job holds the delivery, its worker died. */
  attempt_open: ColumnType<boolean, boolean | undefined, boolean>;
  /** While received, how the last attempt failed; once failed, why the delivery was given up. */
  failure: string | null;
  /** When it was given up after two attempts that died or failed the same way. */
  quarantined_at: Timestamp | null;
  /** When it failed, quarantined or not; set exactly when state is failed (migration 0031). */
  failed_at: Timestamp | null;
  /**
   * When its chunks were deleted: RECON_DELIVERY_RETENTION_DAYS after its file was ingested (migration 0020), or
   * RECON_FAILED_DELIVERY_RETENTION_DAYS after it failed (migration 0031).
   */
  bytes_pruned_at: Timestamp | null;
}

/** `data` reads as a Buffer from PostgreSQL and as a Uint8Array from PGlite. */
export interface DeliveryChunksTable {
  delivery_id: string;
  seq: number;
  data: Uint8Array;
}

export const NIGHTLY_RUN_STATES = ['requesting', 'waiting', 'reconciling', 'reconciled', 'failed'] as const;
export type NightlyRunState = (typeof NIGHTLY_RUN_STATES)[number];

export interface NightlyRunsTable {
  nightly_run_id: Generated<string>;
  /**
   * A date, written as YYYY-MM-DD. Both drivers read it as a Date at midnight (pg's local, PGlite's UTC), so recon
   * selects run_date::text; a where clause compares it with a date (sql<Date>`${day}::date`).
   */
  run_date: ColumnType<Date, string, never>;
  state: ColumnType<NightlyRunState, NightlyRunState | undefined, NightlyRunState>;
  as_of: Timestamp;
  orders: number | null;
  batches: number | null;
  reconciliation_run_id: string | null;
  failure: string | null;
  started_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  next_advance_at: Timestamp | null;
  finished_at: Timestamp | null;
}

export const ALERT_CAUSES = ['nightly_failed', 'nightly_suspect', 'nightly_late', 'callback_unreachable'] as const;
export type AlertCause = (typeof ALERT_CAUSES)[number];

/** The structured fields of an alert (sql/migrations/0018_alerts.sql): strings only, so a webhook reads them as is. */
export type AlertDetails = Readonly<Record<string, string>>;

export interface AlertsTable {
  alert_id: Generated<string>;
  cause: AlertCause;
  /** Unique within its cause: a nightly run's date for the nightly causes. */
  key: string;
  nightly_run_id: string | null;
  title: string;
  text: string;
  details: ColumnType<AlertDetails, string | undefined, string>;
  raised_at: DefaultedTimestamp;
  webhook_delivered_at: Timestamp | null;
  email_delivered_at: Timestamp | null;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: DefaultedTimestamp;
  last_error: string | null;
  given_up_at: Timestamp | null;
}

export type PruneStartedBy = 'schedule' | 'command';

/** A prune that removed, or was to remove, what retention let go (sql/migrations/0020_delivery_retention.sql). */
export interface PrunesTable {
  prune_id: Generated<string>;
  started_by: PruneStartedBy;
  /** A daily prune's day (YYYY-MM-DD in RECON_SCHEDULE_TIMEZONE): unique among them. Null for `recon prune`. */
  day: ColumnType<Date | null, string | null, never>;
  started_at: DefaultedTimestamp;
  finished_at: Timestamp | null;
  /** What it removed, as `recon prune --json` prints it. */
  removed: ColumnType<unknown, string | null | undefined, string | null>;
  failure: string | null;
}

/**
 * reporting.reconciliation (sql/migrations/0005_reporting.sql, 0019, 0022), a view: each order's current verdict, with the
 * explanation stored as judged, or assembled when read for a matched one. Read, never written.
 */
export interface ReconciliationView {
  order_id: string;
  known_order: boolean;
  status: VerdictStatus;
  lifecycle: Lifecycle | null;
  expected_minor: Money;
  settled_minor: Money;
  delta_minor: Money;
  currency: string | null;
  first_seen: Timestamp | null;
  run_id: string;
  as_of: Timestamp;
  explanation: unknown;
  /** The *_minor amounts in the currency's unit (migration 0022). */
  expected: UnitAmount;
  settled: UnitAmount;
  delta: UnitAmount;
  /** The money the verdict puts at risk (0022): null where the figures it needs are missing. */
  at_risk_minor: Money | null;
  at_risk: UnitAmount | null;
  /** Why the verdict is what it is, in a sentence (as explanation ->> 'reason'). */
  reason: string | null;
  /** The verdict's warnings (a payment on another account, and the like); empty when none. */
  warnings: string[];
}

/**
 * recon.current_verdicts (sql/recon/current_verdicts.sql), a view: each order's current verdict as finished runs gave
 * it, its lifecycle as the latest run that judged the order gave it.
 */
export type CurrentVerdictsView = Omit<VerdictsTable, 'recheck_at' | 'rejudged_run_id'>;

/** recon.verdict_versions, a view: every version; it holds from run_id up to, not including, until_run_id. */
export interface VerdictVersionsView extends Omit<CurrentVerdictsView, 'reason'> {
  until_run_id: string | null;
}

/** reporting.verdict_history (migration 0019), a view: one row per change of an order's verdict. Read, never written. */
export interface VerdictHistoryView {
  order_id: string;
  run_id: string;
  as_of: Timestamp;
  run_kind: RunKind;
  change: 'first' | 'changed' | 'removed';
  status_before: VerdictStatus | null;
  status_after: VerdictStatus | null;
  lifecycle_before: Lifecycle | null;
  lifecycle_after: Lifecycle | null;
  currency: string | null;
  expected_before_minor: Money | null;
  expected_after_minor: Money | null;
  settled_before_minor: Money | null;
  settled_after_minor: Money | null;
  delta_before_minor: Money | null;
  delta_after_minor: Money | null;
  first_seen: Timestamp | null;
  /** The *_minor amounts in the currency's unit (migration 0022). */
  expected_before: UnitAmount | null;
  expected_after: UnitAmount | null;
  settled_before: UnitAmount | null;
  settled_after: UnitAmount | null;
  delta_before: UnitAmount | null;
  delta_after: UnitAmount | null;
}

export type ExceptionActionKind = 'ack' | 'note' | 'reopen';

/** recon.exception_actions (migration 0023): the audit trail of acknowledgements, append-only (a trigger refuses the rest). */
export interface ExceptionActionsTable {
  action_id: Generated<string>;
  order_id: string;
  action: ExceptionActionKind;
  note: string | null;
  acted_by: string;
  login: Generated<string>;
  acted_at: DefaultedTimestamp;
  status: VerdictStatus;
  run_id: string;
  first_seen: Timestamp | null;
}

/** recon.reporting_grants (migration 0023): what the roles step last granted, one row. */
export interface ReportingGrantsTable {
  singleton: Generated<boolean>;
  reader_role: string;
  accountant_role: string;
  migration: string;
  granted_at: DefaultedTimestamp;
}

/** reporting.exception_actions (migration 0023), a view of the audit trail. Read, never written. */
export type ExceptionActionsView = Omit<ExceptionActionsTable, 'action_id' | 'login'> & {
  action_id: string;
  login: string;
};

/**
 * reporting.exceptions (0005, 0022, 0023), a view: the open exceptions with their money, age and acknowledgement.
 * The columns recon reads; the view has more (explanation, the amounts of the order).
 */
export interface ExceptionsView {
  order_id: string;
  known_order: boolean;
  status: VerdictStatus;
  lifecycle: Lifecycle | null;
  first_seen: Timestamp | null;
  /** Deprecated: open_days under its former name, kept for saved queries. recon reads open_days. */
  age_days: number | null;
  expected_minor: Money;
  settled_minor: Money;
  delta_minor: Money;
  currency: string | null;
  order_created_at: Timestamp | null;
  order_status: OrderStatus | null;
  payment_method: PaymentMethod | null;
  order_amount_minor: Money | null;
  run_id: string;
  as_of: Timestamp;
  explanation: unknown;
  reason: string | null;
  /** Whole days since the order's creation: the age an accountant means; null for an unknown ORDERID. */
  order_age_days: number | null;
  expected: UnitAmount;
  settled: UnitAmount;
  delta: UnitAmount;
  order_amount: UnitAmount | null;
  at_risk_minor: Money | null;
  at_risk: UnitAmount | null;
  acknowledged: boolean;
  acknowledged_by: string | null;
  acknowledged_at: Timestamp | null;
  last_note: string | null;
  last_note_by: string | null;
  last_note_at: Timestamp | null;
  /** Whole days since first_seen: how long recon has flagged it (0 for every exception on a first install). */
  open_days: number;
  /** The logins behind acknowledged_by and last_note_by, which are names anybody may type. */
  acknowledged_login: string | null;
  last_note_login: string | null;
}

/**
 * reporting.settlement_daily (migration 0022), a view: the money the service moved per day and currency. Its days are
 * dates in the session's recon.report_timezone (UTC when unset). Read, never written.
 */
export interface SettlementDailyView {
  /** A date: both drivers read it as a Date at some midnight, so recon selects day::text. */
  day: ColumnType<Date, never, never>;
  time_zone: string;
  currency: string | null;
  transactions: number;
  payments: number;
  refunds: number;
  paid_minor: Money;
  refunded_minor: Money;
  fees_minor: Money;
  net_minor: Money;
  /** The *_minor amounts in the currency's unit. */
  paid: UnitAmount;
  refunded: UnitAmount;
  fees: UnitAmount;
  net: UnitAmount;
}

/** reporting.run_status_totals (migration 0022), a view: each finished run's bridge by currency and status. */
export interface RunStatusTotalsView {
  run_id: string;
  /** XXX for verdicts without a currency, as in recon.run_totals (migration 0027). */
  currency: string;
  status: VerdictStatus;
  verdicts: number;
  orders: number;
  unknown_orders: number;
  expected_minor: Money;
  settled_minor: Money;
  delta_minor: Money;
  difference_minor: Money;
  /** The *_minor amounts in the currency's unit. */
  expected: UnitAmount;
  settled: UnitAmount;
  delta: UnitAmount;
  difference: UnitAmount;
  /** What the run's verdicts of this status put at risk, as written with each verdict; unknown ones not counted. */
  at_risk_minor: Money;
  at_risk: UnitAmount;
  /** Verdicts whose money at risk could not be told (their figures were missing). */
  at_risk_unknown: number;
}

/**
 * reporting.run_account_totals (migration 0026), a view: each finished run's settled money per processing account and
 * currency, from the succeeded transactions of its verdicts.
 */
export interface RunAccountTotalsView {
  run_id: string;
  /** Null for transactions that name no account. */
  identifier: string | null;
  account_group: string | null;
  /** char(3) of the transactions; null for those without a CURRENCY. */
  currency: string | null;
  orders: number;
  transactions: number;
  paid_minor: Money;
  refunded_minor: Money;
  settled_minor: Money;
  /** The *_minor amounts in the currency's unit. */
  paid: UnitAmount;
  refunded: UnitAmount;
  settled: UnitAmount;
  /** The fees (BILLINGFEES INCL. VAT) of those succeeded transactions (migration 0034). */
  fees_minor: Money;
  fees: UnitAmount;
}

/**
 * reporting.received_to_bridge (sql/reporting/received_to_bridge.sql), a view: each finished run's money received
 * reconciled with its bridge's settled, per currency, one row per line.
 */
export interface ReceivedToBridgeView {
  run_id: string;
  /** char(3); XXX for the bridge of verdicts without a currency. */
  currency: string;
  /** 1 to 7, the line's place. */
  step: number;
  line:
    | 'received'
    | 'paid_for_another_currency'
    | 'unknown_to_another_currency'
    | 'unknown_from_another_currency'
    | 'without_currency'
    | 'not_explained'
    | 'settled';
  description: string;
  orders: number | null;
  transactions: number | null;
  /** Signed as it adds up to settled. */
  amount_minor: Money;
  /** On the received line only. */
  fees_minor: Money | null;
  amount: UnitAmount;
  fees: UnitAmount | null;
}

/** reporting.warnings (sql/reporting/warnings.sql), a view: one row per warning of each current verdict. */
export interface WarningsView {
  order_id: string;
  known_order: boolean;
  status: VerdictStatus;
  /** From 1, among the verdict's warnings. */
  position: number;
  warning: string;
  /** The account the warning names (a payment on an account that does not serve the order's method); else null. */
  identifier: string | null;
  currency: string | null;
  run_id: string;
}

/** Bootstrapped by migrate.ts itself, before the first migration. */
export interface SchemaMigrationsTable {
  name: string;
  applied_at: DefaultedTimestamp;
}

/** The views and functions defined as code (sql/recon, sql/reporting) as last applied: see src/db/definitions.ts. */
export interface SchemaDefinitionsTable {
  file: string;
  kind: 'view' | 'function';
  name: string;
  sha256: string;
  applied_at: DefaultedTimestamp;
}

export interface Schema {
  'recon.schema_migrations': SchemaMigrationsTable;
  'recon.schema_definitions': SchemaDefinitionsTable;
  'recon.files': FilesTable;
  'recon.transactions': TransactionsTable;
  'recon.rejected_rows': RejectedRowsTable;
  'recon.order_imports': OrderImportsTable;
  'recon.orders': OrdersTable;
  'recon.rejected_order_rows': RejectedOrderRowsTable;
  'recon.notifications': NotificationsTable;
  'recon.reconciliation_runs': ReconciliationRunsTable;
  'recon.run_scope_orders': RunScopeOrdersTable;
  'recon.verdicts': VerdictsTable;
  'recon.verdict_history': VerdictHistoryTable;
  'recon.run_totals': RunTotalsTable;
  'recon.run_status_totals': RunStatusTotalsTable;
  'recon.run_account_totals': RunAccountTotalsTable;
  'recon.run_account_parts': RunAccountPartsTable;
  'recon.run_verdict_changes': RunVerdictChangesTable;
  'recon.run_currency_moves': RunCurrencyMovesTable;
  'recon.money_moved': MoneyMovedTable;
  'recon.export_requests': ExportRequestsTable;
  'recon.deliveries': DeliveriesTable;
  'recon.delivery_chunks': DeliveryChunksTable;
  'recon.nightly_runs': NightlyRunsTable;
  'recon.accounts': AccountsTable;
  'recon.workers': WorkersTable;
  'recon.callback_probes': CallbackProbesTable;
  'recon.alerts': AlertsTable;
  'recon.prunes': PrunesTable;
  'recon.exception_actions': ExceptionActionsTable;
  'recon.reporting_grants': ReportingGrantsTable;
  'recon.current_verdicts': CurrentVerdictsView;
  'recon.verdict_versions': VerdictVersionsView;
  'reporting.reconciliation': ReconciliationView;
  'reporting.verdict_history': VerdictHistoryView;
  'reporting.exceptions': ExceptionsView;
  'reporting.exception_actions': ExceptionActionsView;
  'reporting.settlement_daily': SettlementDailyView;
  'reporting.run_status_totals': RunStatusTotalsView;
  'reporting.run_account_totals': RunAccountTotalsView;
  'reporting.received_to_bridge': ReceivedToBridgeView;
  'reporting.warnings': WarningsView;
}
