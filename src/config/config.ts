import path from 'node:path';
import { z } from 'zod';
import { ReconError } from '../errors.ts';

/**
 * Configuration is read once at start-up from the environment, validated, frozen and passed in.
 * Precedence: CLI flags (applied by each command) > environment > the defaults below.
 */
const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);
/** Money settings stay bigint from the digits on: never a float on the money path. */
const minorUnits = z.string().trim().regex(/^\d{1,18}$/, 'expected a whole number of minor units (0 or more)').transform(BigInt);

const EnvSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  RECON_DATA_DIR: z.string().min(1).default('.recon'),
  RECON_TIMEZONE: z.string().min(1).default('UTC'),
  RECON_MAX_FILE_BYTES: positiveInt.default(2 * 1024 ** 3),
  RECON_MAX_UNCOMPRESSED_BYTES: positiveInt.default(20 * 1024 ** 3),
  RECON_MAX_COMPRESSION_RATIO: positiveInt.default(200),
  RECON_SANDBOX_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  RECON_SANDBOX_HOST: z.string().min(1).default('127.0.0.1'),
  RECON_SANDBOX_IDENTIFIER: z.string().min(1).max(32).default('sandbox-merchant'),
  RECON_SANDBOX_SECRET: z.string().min(1).default('sandbox-secret'),
  RECON_SANDBOX_NOTIFY_URL: z.string().url().optional(),
  RECON_SANDBOX_SMTP: z.string().regex(/^[^:]+:\d+$/, 'expected HOST:PORT').optional(),
  RECON_SANDBOX_SEED: z.coerce.number().int().min(0).max(2 ** 32 - 1).optional(),
  RECON_AMOUNT_TOLERANCE_MINOR: minorUnits.default(0n),
  RECON_GRACE_HOURS: nonNegativeInt.default(24),
  RECON_ORDERS_DATABASE_URL: z.string().min(1).optional(),
  RECON_ORDERS_QUERY: z.string().trim().min(1).optional(),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config {
  /** Real PostgreSQL when set; embedded PGlite under `dataDir/pgdata` otherwise. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** Time zone of the DATE column of exports, when the export does not say otherwise. */
  readonly timezone: string;
  readonly limits: IngestLimits;
  readonly sandbox: SandboxConfig;
  readonly reconcile: ReconcileSettings;
  readonly orders: OrdersSourceConfig;
}

export interface ReconcileSettings {
  /** Largest |settled - expected| still matched, in minor units of the order's currency. */
  readonly toleranceMinor: bigint;
  /** How long after its creation an order may still wait for its money without being an exception. */
  readonly graceHours: number;
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
}

export interface SandboxConfig {
  readonly port: number;
  readonly host: string;
  readonly identifier: string;
  readonly secret: string;
  readonly notifyUrl: string | undefined;
  readonly smtp: string | undefined;
  /** Start from the deterministic scenario of this seed; an empty store when undefined. */
  readonly seed: number | undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = issue.path.join('.');
    throw new ReconError('CONFIG', `invalid environment variable ${variable}: ${issue.message}`);
  }
  const e = parsed.data;
  return Object.freeze({
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.RECON_DATA_DIR),
    timezone: e.RECON_TIMEZONE,
    limits: Object.freeze({
      maxFileBytes: e.RECON_MAX_FILE_BYTES,
      maxUncompressedBytes: e.RECON_MAX_UNCOMPRESSED_BYTES,
      maxCompressionRatio: e.RECON_MAX_COMPRESSION_RATIO,
    }),
    sandbox: Object.freeze({
      port: e.RECON_SANDBOX_PORT,
      host: e.RECON_SANDBOX_HOST,
      identifier: e.RECON_SANDBOX_IDENTIFIER,
      secret: e.RECON_SANDBOX_SECRET,
      notifyUrl: e.RECON_SANDBOX_NOTIFY_URL,
      smtp: e.RECON_SANDBOX_SMTP,
      seed: e.RECON_SANDBOX_SEED,
    }),
    reconcile: Object.freeze({
      toleranceMinor: e.RECON_AMOUNT_TOLERANCE_MINOR,
      graceHours: e.RECON_GRACE_HOURS,
    }),
    orders: Object.freeze({
      databaseUrl: e.RECON_ORDERS_DATABASE_URL,
      query: e.RECON_ORDERS_QUERY,
    }),
  });
}
