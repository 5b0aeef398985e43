import path from 'node:path';
import { canonicalTimeZone, isTimeZone } from '@recon/protocol';
import { z } from 'zod';
import { describeError, isReconError, ReconError } from '../errors.ts';
import { LOG_LEVELS, type LogLevel } from '../log/logger.ts';
import { describeOrdersSource } from '../orders/orders-source-name.ts';
import { callbackEndpoint } from '../receive/callback-url.ts';
import { CSV_LOCALES, type CsvLocale } from '../report/csv-cell.ts';
import { loadServiceAccounts, type ServiceAccount } from './service-accounts.ts';

/**
 * Configuration is read once at start-up from the environment, validated, frozen and passed in.
 * Precedence: CLI flags (applied by each command) > environment > the defaults below.
 */
/**
 * A whole number in plain decimal digits, from `min` to `max`. Not `z.coerce.number()`: JavaScript's Number reads
 * `1e3` as 1000, `0x10` as 16 and `` as 0, and a setting written so is a mistake to refuse, not a number to guess.
 */
function wholeNumber(min: number, max: number = Number.MAX_SAFE_INTEGER, message?: string) {
  const said =
    message ??
    (max === Number.MAX_SAFE_INTEGER
      ? `expected a whole number of ${min} or more, in decimal digits`
      : `expected a whole number from ${min} to ${max}, in decimal digits`);
  return z
    .string({ error: said })
    .trim()
    .regex(/^\d{1,16}$/, said)
    .transform(Number)
    .refine((value) => value >= min && value <= max, said);
}

/** A whole number of decimal digits, or undefined: for the few values read before the configuration is. */
export function decimalWholeNumber(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  return trimmed !== undefined && /^\d{1,16}$/.test(trimmed) ? Number(trimmed) : undefined;
}

const positiveInt = wholeNumber(1);
const nonNegativeInt = wholeNumber(0);
const port = wholeNumber(0, 65_535);
/** Money settings stay bigint from the digits on: never a float on the money path. */
const minorUnits = z
  .string()
  .trim()
  .regex(/^\d{1,18}$/, 'expected a whole number of minor units (0 or more)')
  .transform(BigInt);
/**
 * A retention in whole days, written in decimal digits: `1e3` or `0x10` is a typo to refuse, not 1000 or 16 days of
 * data to delete. At most a century: further back than that is no retention, and a larger number would put the
 * cutoff before the first representable instant.
 */
const DAYS_MESSAGE = 'expected a whole number of days from 1 to 36500';
const retentionDays = wholeNumber(1, 36_500, DAYS_MESSAGE);
const timeZone = z.string().min(1).refine(isTimeZone, 'expected an IANA time zone such as Europe/Paris');
/** A PostgreSQL role recon creates and grants to: a plain lower-case identifier, never one of PostgreSQL's own (pg_). */
const roleName = z
  .string()
  .trim()
  .regex(
    /^(?!pg_)[a-z_][a-z0-9_]{0,62}$/,
    'expected a role name: lower-case letters, digits and _, starting with a letter or _, at most 63 characters, not pg_...',
  );

/**
 * A connection string pg can use, checked here so that a typo is a configuration error naming the variable: a
 * postgres:// URL naming its host (in the authority, or as `?host=` for a Unix socket), or a socket: one.
 */
function isPostgresUrl(text: string): boolean {
  if (/^socket:\/./.test(text)) return true;
  if (!/^postgres(ql)?:\/\//.test(text)) return false;
  if (/[?&]host=[^&]/.test(text)) return true;
  try {
    return new URL(text).hostname !== '';
  } catch {
    return false;
  }
}

/** A bare address, user@host: lenient on the host (an internal relay may deliver to recon@localhost). */
const isMailAddress = (text: string) => /^[^\s@<>,;"]+@[^\s@<>,;"]+$/.test(text);
/** Comma-separated e-mail addresses, each checked: the message names the variable, never the address list. */
const addressList = z
  .string()
  .trim()
  .min(1)
  .refine(
    (text) => splitAddresses(text).length > 0 && splitAddresses(text).every(isMailAddress),
    'expected one or more e-mail addresses (user@host) separated by commas',
  )
  .transform(splitAddresses);

function splitAddresses(text: string): string[] {
  return text
    .split(',')
    .map((address) => address.trim())
    .filter((address) => address !== '');
}

/** RECON_DRAIN_SECONDS: what a stopping recon serve gives uploads (a third) and jobs (the rest) in flight. */
export const DEFAULT_DRAIN_SECONDS = 90;
/** An export not delivered this long after its request was sent shows as late in `recon runs`. */
export const DEFAULT_EXPORT_LATE_SECONDS = 600;

const EnvSchema = z.object({
  DATABASE_URL: z
    .string()
    .min(1)
    .refine(isPostgresUrl, 'expected a PostgreSQL connection string, postgres://user@host:port/database')
    .optional(),
  RECON_DATA_DIR: z.string().min(1).default('.recon'),
  RECON_TIMEZONE: timeZone.default('UTC'),
  // A name, not an offset: PostgreSQL reads '+05:30' as POSIX does, five and a half hours west of UTC.
  RECON_REPORT_TIMEZONE: timeZone
    .refine((name) => !/^[+-]/.test(name), 'expected an IANA time zone name such as Europe/Paris, not an offset')
    .transform(canonicalTimeZone)
    .default('UTC'),
  // en: commas and decimal points; fr: semicolons and decimal commas, as a spreadsheet set to French reads them.
  RECON_REPORT_CSV_LOCALE: z
    .preprocess((value) => (typeof value === 'string' ? value.trim().toLowerCase() : value), z.enum(CSV_LOCALES))
    .default('en'),
  RECON_MAX_FILE_BYTES: positiveInt.default(2 * 1024 ** 3),
  RECON_MAX_UNCOMPRESSED_BYTES: positiveInt.default(20 * 1024 ** 3),
  RECON_MAX_COMPRESSION_RATIO: positiveInt.default(200),
  // An export zip holds one csv and perhaps a few metadata entries; ten thousand is far beyond any real one, and far
  // below the hundreds of thousands of entries whose directory alone fills the heap.
  RECON_MAX_ZIP_ENTRIES: positiveInt.default(10_000),
  RECON_AMOUNT_TOLERANCE_MINOR: minorUnits.default(0n),
  RECON_GRACE_HOURS: nonNegativeInt.default(24),
  RECON_RECONCILE_CONNECTIONS: wholeNumber(1, 8).default(2),
  RECON_ORDERS_DATABASE_URL: z.string().min(1).optional(),
  RECON_ORDERS_QUERY: z.string().trim().min(1).optional(),
  RECON_SERVICE_URL: z.url({ protocol: /^https?$/ }).optional(),
  RECON_IDENTIFIER: z.string().min(1).max(32).optional(),
  RECON_SECRET: z.string().min(1).optional(),
  RECON_ACCOUNTS: z.string().optional(),
  RECON_ACCOUNTS_FILE: z.string().optional(),
  RECON_CALLBACK_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  RECON_PORT: port.default(8090),
  RECON_HOST: z.string().min(1).default('127.0.0.1'),
  // Not 9090: that is Prometheus's own port, often on the same host.
  RECON_ADMIN_PORT: port.default(8091),
  RECON_ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  RECON_MAX_CONNECTIONS: positiveInt.default(256),
  RECON_MAX_CONNECTIONS_PER_CLIENT: nonNegativeInt.default(64),
  RECON_MAX_UPLOADS: positiveInt.default(8),
  RECON_MIN_UPLOAD_BYTES_PER_SECOND: positiveInt.default(1024),
  RECON_SLOW_UPLOAD_WINDOW_MS: positiveInt.default(30_000),
  RECON_HEADERS_TIMEOUT_MS: positiveInt.default(20_000),
  RECON_SCHEDULE: z.string().trim().min(1).default('30 2 * * *'),
  RECON_SCHEDULE_TIMEZONE: timeZone.default('Europe/Paris'),
  RECON_LOOKBACK_DAYS: positiveInt.default(30),
  RECON_EXPORT_BATCH_SIZE: positiveInt.default(200),
  // The service's enumerations are taken in any letter case (the merchant SDK writes GZIP); recon sends them lower-case.
  RECON_EXPORT_COMPRESSION: z
    .preprocess(
      (value) => (typeof value === 'string' ? value.trim().toLowerCase() : value),
      z.enum(['zip', 'gzip', 'bzip']),
    )
    .default('gzip'),
  RECON_EXPORT_TIMEOUT_SECONDS: positiveInt.default(3600),
  RECON_EXPORT_ATTEMPTS: positiveInt.default(3),
  RECON_EXPORT_IN_FLIGHT: positiveInt.default(32),
  RECON_EXPORT_LATE_SECONDS: positiveInt.default(DEFAULT_EXPORT_LATE_SECONDS),
  RECON_DRAIN_SECONDS: positiveInt.default(DEFAULT_DRAIN_SECONDS),
  // pg-boss refuses a heartbeat under 10 s.
  RECON_JOB_HEARTBEAT_SECONDS: wholeNumber(10).default(30),
  // pg-boss polls no oftener than every 500 ms.
  RECON_JOB_POLL_MS: wholeNumber(500, 60_000).default(2000),
  RECON_LOG_LEVEL: z
    .preprocess((value) => (typeof value === 'string' ? value.trim().toLowerCase() : value), z.enum(LOG_LEVELS))
    .default('info'),
  // The URL may hold a token (Slack's, Mattermost's): zod's messages never repeat the value.
  RECON_ALERT_WEBHOOK: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).optional(),
  RECON_ALERT_EMAIL: addressList.optional(),
  RECON_SMTP_URL: z
    .url({ protocol: /^smtps?$/, hostname: /./, error: 'expected smtp://host:port or smtps://user:password@host:port' })
    .optional(),
  RECON_ALERT_FROM: z
    .string()
    .trim()
    .refine(isMailAddress, 'expected an e-mail address, user@host')
    .default('recon@localhost'),
  RECON_ALERT_LATE_HOURS: wholeNumber(1, 72).default(6),
  RECON_DELIVERY_RETENTION_DAYS: retentionDays.default(90),
  // A month to look at what the service sent that recon could not load (recon runs lists each failed delivery).
  RECON_FAILED_DELIVERY_RETENTION_DAYS: retentionDays.default(30),
  // Two fiscal years and a margin: an auditor's questions about last year's books still find their runs.
  RECON_RUN_RETENTION_DAYS: retentionDays.default(800),
  RECON_READER_ROLE: roleName.default('recon_reader'),
  RECON_ACCOUNTANT_ROLE: roleName.default('recon_accountant'),
});

export interface Config {
  /** Real PostgreSQL when set; embedded PGlite under `dataDir/pgdata` otherwise. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** Time zone of the DATE column of exports, when the export does not say otherwise. */
  readonly timezone: string;
  /** IANA zone whose dates are the days of `recon report` (money moved, verdicts per day). */
  readonly reportTimezone: string;
  /** The csv dialect of `recon report --format csv` unless --csv-locale says another. */
  readonly reportCsvLocale: CsvLocale;
  readonly limits: IngestLimits;
  readonly reconcile: ReconcileSettings;
  readonly orders: OrdersSourceConfig;
  readonly service: ServiceConfig;
  readonly serve: ServeConfig;
  readonly nightly: NightlyConfig;
  readonly queue: QueueConfig;
  /** What `recon serve` and `recon worker` log (their JSON lines on stdout). */
  readonly log: LogConfig;
  readonly admin: AdminConfig;
  readonly alerts: AlertConfig;
  readonly retention: RetentionConfig;
  readonly reportingRoles: ReportingRolesConfig;
}

/** The roles of this database's reporting schema (PostgreSQL only): distinct names keep two databases apart. */
export interface ReportingRolesConfig {
  /** Reads the reporting views. */
  readonly reader: string;
  /** Reads what the reader reads, and acknowledges exceptions through reporting.exception_action. */
  readonly accountant: string;
}

/** How long recon keeps what it no longer needs to run: `recon prune` and recon serve's daily prune remove the rest. */
export interface RetentionConfig {
  /** A delivered file's bytes are deleted this many days after the file was ingested; its rows stay. */
  readonly deliveryDays: number;
  /** The bytes of a delivery that failed to ingest (quarantined or not) are deleted this many days after it failed. */
  readonly failedDeliveryDays: number;
  /** Reconciliation runs older than this many days are removed with the history only they need. */
  readonly runDays: number;
}

export interface LogConfig {
  /** The least severe level written; `silent` writes nothing. */
  readonly level: LogLevel;
}

/** What recon sends when a nightly run fails, is suspect or late, or the callback base is unreachable. */
export interface AlertConfig {
  /** RECON_ALERT_WEBHOOK: each alert POSTed as JSON. It may hold a token: never printed whole. */
  readonly webhookUrl: string | undefined;
  readonly email: AlertEmailConfig | undefined;
  /** A nightly run not reconciled this many hours after its slot is late. */
  readonly lateHours: number;
}

export interface AlertEmailConfig {
  readonly to: readonly string[];
  /** smtp:// (STARTTLS when offered) or smtps://, with user:password when the relay wants them. */
  readonly smtpUrl: string;
  readonly from: string;
}

/** Whether any channel is set: without one, recon neither looks for alerts nor sends any. */
export function alertsEnabled(alerts: AlertConfig): boolean {
  return alerts.webhookUrl !== undefined || alerts.email !== undefined;
}

/** The operators' listener of `recon serve` and `recon worker`: /metrics and /healthz. */
export interface AdminConfig {
  /** 0 picks a free port. */
  readonly port: number;
  /** Loopback by default: /metrics and /healthz are for the host, not the internet. */
  readonly host: string;
}

/** The job queue between receiving and ingesting (pg-boss, in recon's database). */
export interface QueueConfig {
  /** A job whose worker went silent this long (killed) is handed to another worker. */
  readonly heartbeatSeconds: number;
  /**
   * How often an idle worker looks for a job it was not woken for: one another process sent, or one due later (a
   * nightly run's next look at its timeouts).
   */
  readonly pollMs: number;
  /** After SIGTERM or SIGINT, uploads and jobs in flight get this long to finish; then the process ends anyway. */
  readonly drainSeconds: number;
}

/** The payment service recon talks to (its endpoints are <url>/front/service/rest/process and /export). */
export interface ServiceConfig {
  readonly url: string | undefined;
  /**
   * The merchant's processing accounts (RECON_ACCOUNTS, RECON_ACCOUNTS_FILE, or the pair RECON_IDENTIFIER and
   * RECON_SECRET as one); empty when none is configured.
   */
  readonly accounts: readonly ServiceAccount[];
  /** Every secret configured (a lone RECON_SECRET too): what logs and alerts must never show. */
  readonly secrets: readonly string[];
  /** Which of RECON_IDENTIFIER and RECON_SECRET is set without the other, for requireService's message. */
  readonly halfPair: 'RECON_IDENTIFIER' | 'RECON_SECRET' | undefined;
}

/** ServiceConfig with everything set: what a command that calls the service needs. */
export interface ServiceAccess {
  readonly url: string;
  /** At least one; the first is the default account (the one a single-account setup names). */
  readonly accounts: readonly [ServiceAccount, ...ServiceAccount[]];
}

/** A command that calls the service needs its URL and an account: a missing one is a CONFIG error naming the variable, before anything is opened. */
export function requireService(service: ServiceConfig): ServiceAccess {
  throwProblems(serviceProblems(service).map((problem) => problem.text));
  const [first, ...rest] = service.accounts;
  return { url: service.url!, accounts: [first!, ...rest] };
}

/** RECON_CALLBACK_BASE_URL, checked at start-up (it must leave room for a token in the 32 characters). */
export function requireCallbackBase(serve: ServeConfig): string {
  throwProblems(callbackBaseProblems(serve).map((problem) => problem.text));
  return serve.callbackBaseUrl!;
}

/** RECON_ORDERS_DATABASE_URL and RECON_ORDERS_QUERY, both needed by `recon sync-orders`. */
export function requireOrdersSource(orders: OrdersSourceConfig): {
  readonly databaseUrl: string;
  readonly query: string;
} {
  throwProblems(ordersSourceProblems(orders).map((problem) => problem.text));
  return { databaseUrl: orders.databaseUrl!, query: orders.query! };
}

/** A setting a command needs and lacks: the variable, and the sentence that says what to set it to. */
interface SettingProblem {
  readonly variable: string;
  readonly text: string;
}

const notSet = (variable: string, what: string): SettingProblem => ({
  variable,
  text: `environment variable ${variable} is not set: ${what}`,
});

/** What is missing for a command that calls the service: its URL, and an account (each half of the pair named). */
function serviceProblems(service: ServiceConfig): SettingProblem[] {
  const problems: SettingProblem[] = [];
  if (service.url === undefined)
    problems.push(notSet('RECON_SERVICE_URL', "the payment service's base URL (https://...)"));
  if (service.accounts.length === 0) {
    if (service.halfPair !== 'RECON_IDENTIFIER')
      problems.push(
        notSet(
          'RECON_IDENTIFIER',
          "the merchant account's IDENTIFIER at the service (or list accounts in RECON_ACCOUNTS)",
        ),
      );
    if (service.halfPair !== 'RECON_SECRET')
      problems.push(notSet('RECON_SECRET', "the account's secret, which signs every request (HASH)"));
  }
  return problems;
}

/** RECON_CALLBACK_BASE_URL set, and leaving room for a token in CALLBACKURL's 32 characters (callback-url.ts). */
function callbackBaseProblems(serve: ServeConfig): SettingProblem[] {
  const variable = 'RECON_CALLBACK_BASE_URL';
  if (!serve.callbackBaseUrl)
    return [
      notSet(
        variable,
        "the public URL the service posts exports to, e.g. https://rc.shop.example/ (at most 24 characters, so that a token of 8 fits in CALLBACKURL's 32)",
      ),
    ];
  try {
    callbackEndpoint(serve.callbackBaseUrl);
    return [];
  } catch (error) {
    return [{ variable, text: describeError(error) }];
  }
}

/** `recon sync-orders` reads the merchant's database with its query: both are needed. */
function ordersSourceProblems(orders: OrdersSourceConfig): SettingProblem[] {
  const problems: SettingProblem[] = [];
  const variable = 'RECON_ORDERS_DATABASE_URL';
  if (orders.databaseUrl === undefined)
    problems.push(notSet(variable, "the merchant's orders database (postgres://...)"));
  else
    try {
      describeOrdersSource(orders.databaseUrl);
    } catch (error) {
      problems.push({ variable, text: describeError(error) });
    }
  if (orders.query === undefined) problems.push(notSet('RECON_ORDERS_QUERY', 'the SQL query that returns the orders'));
  return problems;
}

/**
 * What a command needs beyond what every command reads: checked by loadConfig with every other setting, so that one
 * message names everything to fix.
 */
export type Requirement = 'service' | 'callbackBase' | 'ordersSource';

const REQUIREMENTS: Record<Requirement, (config: Config) => SettingProblem[]> = {
  service: (config) => serviceProblems(config.service),
  callbackBase: (config) => callbackBaseProblems(config.serve),
  ordersSource: (config) => ordersSourceProblems(config.orders),
};

/**
 * One ReconError CONFIG for all the problems: a start names every setting to fix at once, rather than one per try.
 * Each problem names its variable and says what it expects.
 */
function throwProblems(problems: readonly string[]): void {
  if (problems.length === 0) return;
  if (problems.length === 1) throw new ReconError('CONFIG', problems[0]!);
  throw new ReconError(
    'CONFIG',
    `${problems.length} settings to fix: ${problems.map((problem, index) => `(${index + 1}) ${problem}`).join('; ')}`,
  );
}

/** `recon serve`: where it listens, what a client may hold of it, and the public URL the service posts exports to. */
export interface ServeConfig {
  readonly port: number;
  readonly host: string;
  /** Connections open at once; a new one past it is closed at once. */
  readonly maxConnections: number;
  /** Connections open at once from one client address; 0: unbounded (behind a proxy). */
  readonly maxConnectionsPerClient: number;
  /** Deliveries read at once; one more is answered 503 (Retry-After) before its body is read. */
  readonly maxUploads: number;
  /** A request body arriving slower than this, over a window of `slowUploadWindowMs`, is cut. */
  readonly minUploadBytesPerSecond: number;
  readonly slowUploadWindowMs: number;
  /** A request head not whole within this is cut. */
  readonly headersTimeoutMs: number;
  /** The public base of every CALLBACKURL; its path is where deliveries are taken, a token appended. */
  readonly callbackBaseUrl: string | undefined;
}

/** The nightly run: when it starts and how it asks for exports. */
export interface NightlyConfig {
  /** Cron expression (node-cron syntax) in `scheduleTimezone`. */
  readonly schedule: string;
  readonly scheduleTimezone: string;
  /** Orders created this many days back are in a run's scope. */
  readonly lookbackDays: number;
  /** ORDERIDs per getTransactions request. */
  readonly exportBatchSize: number;
  readonly exportCompression: 'zip' | 'gzip' | 'bzip';
  /** How long a requested export may take to arrive before it is asked for again. */
  readonly exportTimeoutSeconds: number;
  /** Requests per export before it is given up. */
  readonly exportAttempts: number;
  /**
   * Requests of a run in flight at once: sent and not delivered yet (for a minute at most), or delivered and not
   * ingested yet. The rest wait their turn, so deliveries come no faster than the workers ingest them.
   */
  readonly exportInFlight: number;
  /** An export still missing this long after its request was sent is shown as late while the run waits. */
  readonly exportLateSeconds: number;
}

export interface ReconcileSettings {
  /** Largest |settled - expected| still matched, in minor units of the order's currency. */
  readonly toleranceMinor: bigint;
  /** How long after its creation an order may still wait for its money without being an exception. */
  readonly graceHours: number;
  /** Connections writing a large run's verdicts at once: 1 to 8, at most the pool's 10 less the coordinator's. */
  readonly connections: number;
}

/** The merchant's own database that `recon sync-orders` reads orders from. */
export interface OrdersSourceConfig {
  readonly databaseUrl: string | undefined;
  /** Returns order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at. */
  readonly query: string | undefined;
}

export interface IngestLimits {
  /** Largest export file accepted, in bytes, as delivered (compressed). */
  readonly maxFileBytes: number;
  /** Largest total of decompressed csv bytes from one file. */
  readonly maxUncompressedBytes: number;
  /** Largest ratio of decompressed to compressed bytes: a zip bomb's signature. */
  readonly maxCompressionRatio: number;
  /** Most entries a zip's directory may hold; it may also take at most ZIP_DIRECTORY_BYTES_PER_ENTRY bytes per allowed entry. */
  readonly maxZipEntries: number;
}

/**
 * The configuration from `env`, with what `requirements` the command has. Every problem is found before any is
 * said: an invalid variable, two that contradict each other, a missing one the command needs, all in one
 * ReconError CONFIG.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, requirements: readonly Requirement[] = []): Config {
  const problems: string[] = [];
  const invalid = new Set<string>();
  let parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const variable = String(issue.path[0]);
      if (invalid.has(variable)) continue;
      invalid.add(variable);
      problems.push(`invalid environment variable ${variable}: ${issue.message}`);
    }
    // The rest read without the invalid ones, so that what else is wrong is said in the same message.
    parsed = EnvSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([name]) => !invalid.has(name))));
    if (!parsed.success) throwProblems(problems);
  }
  const e = parsed.data!;
  if (e.RECON_ALERT_EMAIL && !e.RECON_SMTP_URL && !invalid.has('RECON_SMTP_URL')) {
    problems.push(
      'RECON_ALERT_EMAIL is set but RECON_SMTP_URL is not: set RECON_SMTP_URL to the relay that sends the alerts (smtp://host:port or smtps://user:password@host)',
    );
  }
  if (e.RECON_SMTP_URL && !e.RECON_ALERT_EMAIL && !invalid.has('RECON_ALERT_EMAIL')) {
    problems.push(
      'RECON_SMTP_URL is set but RECON_ALERT_EMAIL is not: set RECON_ALERT_EMAIL to the addresses alerts go to',
    );
  }
  if (e.RECON_READER_ROLE === e.RECON_ACCOUNTANT_ROLE) {
    problems.push(
      `RECON_READER_ROLE and RECON_ACCOUNTANT_ROLE are both ${e.RECON_READER_ROLE}: the reader may not write, so they need two names`,
    );
  }
  let accounts: ServiceAccount[] = [];
  let accountsUnread = false;
  try {
    accounts = loadServiceAccounts(env);
  } catch (error) {
    if (!isReconError(error, 'CONFIG')) throw error;
    problems.push(error.message);
    accountsUnread = true;
  }
  const config = buildConfig(e, accounts);
  for (const requirement of new Set(requirements)) {
    for (const problem of REQUIREMENTS[requirement](config)) {
      // Said once: as invalid, or as the account list that could not be read.
      if (invalid.has(problem.variable)) continue;
      if (accountsUnread && (problem.variable === 'RECON_IDENTIFIER' || problem.variable === 'RECON_SECRET')) continue;
      problems.push(problem.text);
    }
  }
  throwProblems(problems);
  return config;
}

function buildConfig(e: z.infer<typeof EnvSchema>, accounts: readonly ServiceAccount[]): Config {
  return Object.freeze({
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.RECON_DATA_DIR),
    timezone: e.RECON_TIMEZONE,
    reportTimezone: e.RECON_REPORT_TIMEZONE,
    reportCsvLocale: e.RECON_REPORT_CSV_LOCALE,
    limits: Object.freeze({
      maxFileBytes: e.RECON_MAX_FILE_BYTES,
      maxUncompressedBytes: e.RECON_MAX_UNCOMPRESSED_BYTES,
      maxCompressionRatio: e.RECON_MAX_COMPRESSION_RATIO,
      maxZipEntries: e.RECON_MAX_ZIP_ENTRIES,
    }),
    reconcile: Object.freeze({
      toleranceMinor: e.RECON_AMOUNT_TOLERANCE_MINOR,
      graceHours: e.RECON_GRACE_HOURS,
      connections: e.RECON_RECONCILE_CONNECTIONS,
    }),
    orders: Object.freeze({
      databaseUrl: e.RECON_ORDERS_DATABASE_URL,
      query: e.RECON_ORDERS_QUERY,
    }),
    service: Object.freeze({
      url: e.RECON_SERVICE_URL,
      accounts: Object.freeze(accounts),
      secrets: Object.freeze([
        ...new Set([
          ...accounts.map((account) => account.secret),
          ...(e.RECON_SECRET === undefined ? [] : [e.RECON_SECRET]),
        ]),
      ]),
      halfPair:
        (e.RECON_IDENTIFIER === undefined) === (e.RECON_SECRET === undefined)
          ? undefined
          : e.RECON_IDENTIFIER === undefined
            ? ('RECON_SECRET' as const)
            : ('RECON_IDENTIFIER' as const),
    }),
    serve: Object.freeze({
      port: e.RECON_PORT,
      host: e.RECON_HOST,
      maxConnections: e.RECON_MAX_CONNECTIONS,
      maxConnectionsPerClient: e.RECON_MAX_CONNECTIONS_PER_CLIENT,
      maxUploads: e.RECON_MAX_UPLOADS,
      minUploadBytesPerSecond: e.RECON_MIN_UPLOAD_BYTES_PER_SECOND,
      slowUploadWindowMs: e.RECON_SLOW_UPLOAD_WINDOW_MS,
      headersTimeoutMs: e.RECON_HEADERS_TIMEOUT_MS,
      callbackBaseUrl: e.RECON_CALLBACK_BASE_URL,
    }),
    nightly: Object.freeze({
      schedule: e.RECON_SCHEDULE,
      scheduleTimezone: e.RECON_SCHEDULE_TIMEZONE,
      lookbackDays: e.RECON_LOOKBACK_DAYS,
      exportBatchSize: e.RECON_EXPORT_BATCH_SIZE,
      exportCompression: e.RECON_EXPORT_COMPRESSION,
      exportTimeoutSeconds: e.RECON_EXPORT_TIMEOUT_SECONDS,
      exportAttempts: e.RECON_EXPORT_ATTEMPTS,
      exportInFlight: e.RECON_EXPORT_IN_FLIGHT,
      exportLateSeconds: e.RECON_EXPORT_LATE_SECONDS,
    }),
    queue: Object.freeze({
      heartbeatSeconds: e.RECON_JOB_HEARTBEAT_SECONDS,
      pollMs: e.RECON_JOB_POLL_MS,
      drainSeconds: e.RECON_DRAIN_SECONDS,
    }),
    log: Object.freeze({ level: e.RECON_LOG_LEVEL }),
    admin: Object.freeze({ port: e.RECON_ADMIN_PORT, host: e.RECON_ADMIN_HOST }),
    alerts: Object.freeze({
      webhookUrl: e.RECON_ALERT_WEBHOOK,
      email:
        e.RECON_ALERT_EMAIL && e.RECON_SMTP_URL
          ? Object.freeze({
              to: Object.freeze(e.RECON_ALERT_EMAIL),
              smtpUrl: e.RECON_SMTP_URL,
              from: e.RECON_ALERT_FROM,
            })
          : undefined,
      lateHours: e.RECON_ALERT_LATE_HOURS,
    }),
    retention: Object.freeze({
      deliveryDays: e.RECON_DELIVERY_RETENTION_DAYS,
      failedDeliveryDays: e.RECON_FAILED_DELIVERY_RETENTION_DAYS,
      runDays: e.RECON_RUN_RETENTION_DAYS,
    }),
    reportingRoles: Object.freeze({ reader: e.RECON_READER_ROLE, accountant: e.RECON_ACCOUNTANT_ROLE }),
  });
}
