import { sql, type Kysely } from 'kysely';
import type { ExceptionActionKind, Schema, VerdictStatus } from '../db/schema.ts';
import { SQL_STATE, sqlState } from '../db/sql-state.ts';
import { ReconError, type ReconErrorCode } from '../errors.ts';

export interface ExceptionActionRequest {
  readonly orderId: string;
  readonly action: ExceptionActionKind;
  /** Required for ack and note (the function refuses them without one). */
  readonly note?: string | undefined;
  /** The name recorded; the database login when absent. */
  readonly actor?: string | undefined;
}

/** One row of the audit trail, as reporting.exception_actions shows it. */
export interface ExceptionAction {
  readonly actionId: string;
  readonly orderId: string;
  readonly action: ExceptionActionKind;
  readonly note: string | null;
  /** The name given, or the login. */
  readonly actedBy: string;
  /** The database login that acted: what a name given cannot change. */
  readonly login: string;
  readonly actedAt: Date;
  /** The verdict's status when the action was taken, and the run that verdict held from. */
  readonly status: VerdictStatus;
  readonly runId: string;
}

/** The function's own SQLSTATEs, as the error codes a caller branches on. */
const ERROR_CODES: Readonly<Record<string, ReconErrorCode>> = {
  [SQL_STATE.exceptionNoVerdict]: 'EXCEPTION_NOT_FOUND',
  [SQL_STATE.exceptionNotOpen]: 'EXCEPTION_NOT_OPEN',
  [SQL_STATE.exceptionNotAcknowledged]: 'EXCEPTION_NOT_ACKNOWLEDGED',
  [SQL_STATE.exceptionAlreadyAcknowledged]: 'EXCEPTION_ALREADY_ACKNOWLEDGED',
  [SQL_STATE.exceptionNoteRequired]: 'USAGE',
  [SQL_STATE.exceptionTextTooLong]: 'USAGE',
  [SQL_STATE.invalidParameterValue]: 'USAGE',
};

/** What to do after each refusal: the command that lists what can be acted on. */
const NEXT_STEP: Readonly<Partial<Record<ReconErrorCode, string>>> = {
  EXCEPTION_NOT_FOUND: '`recon exceptions list` lists the open exceptions, with their ORDERIDs',
  EXCEPTION_NOT_OPEN: '`recon exceptions list` lists the open exceptions, with their ORDERIDs',
  EXCEPTION_NOT_ACKNOWLEDGED: '`recon exceptions list --acknowledged yes` lists the acknowledged ones',
};

/**
 * Acts on an exception through reporting.exception_action, the same function an accountant calls from their SQL
 * tool: its rules (ack only an open exception, reopen only an acknowledged one) live there alone.
 */
export async function actOnException(db: Kysely<Schema>, request: ExceptionActionRequest): Promise<ExceptionAction> {
  let actionId: string;
  try {
    const { rows } = await sql<{ action_id: string }>`SELECT reporting.exception_action(${request.orderId},
      ${request.action}, ${request.note ?? null}, ${request.actor ?? null})::text AS action_id`.execute(db);
    actionId = rows[0]!.action_id;
  } catch (error) {
    const code = ERROR_CODES[sqlState(error) ?? ''];
    if (code) {
      const next = NEXT_STEP[code];
      throw new ReconError(code, `${(error as Error).message}${next ? `: ${next}` : ''}`, { cause: error });
    }
    throw error;
  }
  const row = await db
    .selectFrom('reporting.exception_actions')
    .select(['action_id', 'order_id', 'action', 'note', 'acted_by', 'login', 'acted_at', 'status', 'run_id'])
    .where('action_id', '=', actionId)
    .executeTakeFirstOrThrow();
  return {
    actionId: String(row.action_id),
    orderId: row.order_id,
    action: row.action,
    note: row.note,
    actedBy: row.acted_by,
    login: row.login,
    actedAt: row.acted_at,
    status: row.status,
    runId: String(row.run_id),
  };
}
