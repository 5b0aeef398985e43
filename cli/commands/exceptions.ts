import os from 'node:os';
import { loadConfig } from '../../src/config/config.ts';
import { prepareDatabase } from '../../src/db/prepare-database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { VERDICT_STATUSES, type ExceptionActionKind, type VerdictStatus } from '../../src/db/schema.ts';
import { ReconError } from '../../src/errors.ts';
import { actedBy } from '../../src/exceptions/acted-by.ts';
import { actOnException, type ExceptionAction } from '../../src/exceptions/exception-action.ts';
import { listExceptions } from '../../src/exceptions/exception-list.ts';
import { formatExceptionJson, formatExceptionTable } from '../../src/terminal/exception-list-output.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

const EXCEPTION_STATUSES = VERDICT_STATUSES.filter((status) => status !== 'matched' && status !== 'pending');
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 100_000;

const USAGE = `usage: recon exceptions ack ORDERID --note TEXT [--by NAME]
       recon exceptions note ORDERID --note TEXT [--by NAME]
       recon exceptions reopen ORDERID [--note TEXT] [--by NAME]
       recon exceptions list [--status STATUS] [--acknowledged yes|no] [--limit N] [--json]

Marks open exceptions as handled, and lists them. Every action is kept in reporting.exception_actions (who, when,
the note, the verdict's status and run at the time). An acknowledgement holds while the exception keeps the status
it was given for; it lapses when the status changes or the exception resolves, even if it comes back later.

  ack       the open exception of ORDERID is handled (not for a matched or pending verdict)
  note      a note on ORDERID's verdict, its acknowledgement unchanged
  reopen    withdraws the acknowledgement of ORDERID
  list      the open exceptions, oldest first, with their acknowledgement and last note

options:
  --note TEXT            what was done or found (required for ack and note)
  --by NAME              who acted, as recorded (default: the name of the user running recon)
  --status STATUS        list: only this exception (${EXCEPTION_STATUSES.join(', ')})
  --acknowledged yes|no  list: only acknowledged exceptions, or only those not (new, reopened, lapsed)
  --limit N              list: at most N exceptions (default ${DEFAULT_LIMIT}); says how many more there are
  --json                 list: one JSON document on stdout (amounts as digit strings of minor units and decimals)
  -h, --help             this help

Accountants do the same from their SQL tool: SELECT reporting.exception_action('ORDERID', 'ack', 'note').

exit codes: 0 done, 1 usage or configuration error, 2 failed (no verdict for ORDERID, not an open exception,
not acknowledged, the database).
`;

const ACTIONS: readonly ExceptionActionKind[] = ['ack', 'note', 'reopen'];

export const OPTIONS = {
  note: { type: 'string' },
  by: { type: 'string' },
  status: { type: 'string' },
  acknowledged: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(ctx: CommandContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(ctx.argv, OPTIONS, true);
  if (values.help) {
    ctx.stdout.write(USAGE);
    return EXIT.ok;
  }
  const [subcommand, ...rest] = positionals;
  if (subcommand === 'list') {
    if (rest.length > 0) throw usageError(`list takes no ORDERID (got ${rest[0]})`);
    if (values.note !== undefined || values.by !== undefined)
      throw usageError('--note and --by are for ack, note and reopen');
    const filter = {
      status: parseStatus(values.status),
      acknowledged: parseYesNo(values.acknowledged),
      limit: parseLimit(values.limit),
    };
    return withDatabase(ctx, async (database) => {
      const list = await listExceptions(database.db, filter);
      ctx.stdout.write((values.json ? formatExceptionJson(list) : formatExceptionTable(list)) + '\n');
      return EXIT.ok;
    });
  }
  const action = ACTIONS.find((name) => name === subcommand);
  if (action === undefined) {
    throw usageError(
      subcommand === undefined ? 'say what to do: ack, note, reopen or list' : `unknown subcommand ${subcommand}`,
    );
  }
  if (rest.length !== 1) throw usageError(`${action} takes one ORDERID`);
  for (const option of ['status', 'acknowledged', 'limit', 'json'] as const)
    if (values[option] !== undefined) throw usageError(`--${option} is for list`);
  const note = values.note?.trim();
  if (action !== 'reopen' && !note) throw usageError(`${action} needs --note TEXT: say what was done or found`);
  const request = { orderId: rest[0]!, action, note: note || undefined, actor: values.by?.trim() || osUserName() };
  return withDatabase(ctx, async (database) => {
    ctx.stdout.write(describeAction(await actOnException(database.db, request)) + '\n');
    return EXIT.ok;
  });
}

async function withDatabase(
  ctx: CommandContext,
  work: (database: Awaited<ReturnType<typeof openDatabase>>) => Promise<number>,
): Promise<number> {
  const config = loadConfig(ctx.env);
  const database = await openDatabase(config);
  try {
    await prepareDatabase(database, config);
    return await work(database);
  } finally {
    await database.close();
  }
}

function describeAction(done: ExceptionAction): string {
  const verb = { ack: 'acknowledged', note: 'noted', reopen: 'reopened' }[done.action];
  return `${verb} ${done.orderId} (${done.status}, verdict of run ${done.runId}) as ${actedBy(done.actedBy, done.login)}: action ${done.actionId}`;
}

function parseStatus(text: string | undefined): VerdictStatus | undefined {
  if (text === undefined) return undefined;
  const status = EXCEPTION_STATUSES.find((name) => name === text.trim());
  if (!status) throw usageError(`--status ${text}: expected one of ${EXCEPTION_STATUSES.join(', ')}`);
  return status;
}

function parseYesNo(text: string | undefined): boolean | undefined {
  if (text === undefined) return undefined;
  const answer = text.trim().toLowerCase();
  if (answer === 'yes') return true;
  if (answer === 'no') return false;
  throw usageError(`--acknowledged ${text}: expected yes or no`);
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  const limit = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT))
    throw usageError(`--limit ${text}: expected a whole number from 1 to ${MAX_LIMIT}`);
  return limit;
}

/** Who runs recon, as the OS knows them; absent (a container user with no name), the database login is recorded. */
function osUserName(): string | undefined {
  try {
    return os.userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

function usageError(message: string): ReconError {
  return new ReconError('USAGE', message);
}
