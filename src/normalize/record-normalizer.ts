import type { DocumentedExportColumn } from '@recon/protocol';
import { normalizeAmount } from './amount.ts';
import { normalizeCurrency } from './currency.ts';
import { createDateNormalizer } from './date.ts';
import { emptyToNull, isBlank } from './empty-value.ts';
import { normalizeExecCode } from './exec-code.ts';
import { cleanHeaderName, exportColumnOf } from './export-columns.ts';
import type { HeaderPlan } from './header-plan.ts';
import { normalizePosition } from './position.ts';
import { quoteValue, RuleViolation } from './rule-violation.ts';
import { createScopeCheck, type RowScope } from './row-scope.ts';
import type { TransactionRow } from './transaction-row.ts';

export type NormalizeResult = { ok: true; row: TransactionRow } | { ok: false; reason: string };

/**
 * The per-record step of ingest, on the hot path (a million records a file): everything that depends only on the
 * header (which position holds which column, the zone's offsets) is worked out here once, so a record costs index
 * lookups and the rule functions.
 *
 * Column rules, in brief (each rule's file says why):
 * - TRANSACTIONID is required and kept as written; empty or only spaces rejects the row.
 * - Text columns (IDENTIFIER, ORDERID, OPERATIONTYPE, CLIENT*, CARD*, 3DS*, RULE APPLIED) are kept as written:
 *   the empty string becomes null, nothing else is altered.
 * - Structured columns (DATE, AMOUNT, CURRENCY, EXECCODE, BILLINGFEES INCL. VAT, SCHEDULE, RETRY) ignore
 *   surrounding spaces, so empty or only spaces becomes null; any other value must pass its rule.
 * - AMOUNT and fees are read with the row's CURRENCY; without one (no column, or an empty value) with the
 *   documented two decimals.
 * - Unknown columns go to `extra` under their header name, values as written (an empty value stays "", so a
 *   newer export can clear an older one).
 *
 * A record outside `scope` (an account or ORDERID its request did not ask for, row-scope.ts) is rejected with the
 * scope's reason, whatever its other values.
 *
 * A rejected record's reason is one line: the column as the header names it, the quoted value, what was expected.
 * `plan` comes from planHeader (which guarantees TRANSACTIONID and unique names); an unknown `timezone` throws
 * ReconError CONFIG here, before any record.
 */
export function createRecordNormalizer(
  plan: HeaderPlan,
  options: { timezone: string; scope?: RowScope | undefined },
): (values: string[]) => NormalizeResult {
  const toUtcInstant = createDateNormalizer(options.timezone);
  const outsideScope = createScopeCheck(options.scope, plan);
  const width = plan.header.length;
  const names = plan.header.map(cleanHeaderName);
  const exportColumns = plan.header.map(exportColumnOf);
  const at = (column: DocumentedExportColumn): number => exportColumns.indexOf(column);

  const transactionId = at('TRANSACTIONID');
  const identifier = at('IDENTIFIER');
  const orderId = at('ORDERID');
  const operationType = at('OPERATIONTYPE');
  const date = at('DATE');
  const amount = at('AMOUNT');
  const currency = at('CURRENCY');
  const execCode = at('EXECCODE');
  const fees = at('BILLINGFEES INCL. VAT');
  const schedule = at('SCHEDULE');
  const retry = at('RETRY');
  const clientEmail = at('CLIENTEMAIL');
  const clientAddress = at('CLIENTADDRESS');
  const cardFullName = at('CARDFULLNAME');
  const cardType = at('CARDTYPE');
  const cardCountry = at('CARDCOUNTRY');
  const threeDSecure = at('3DSECURE');
  const threeDsGlobalStatus = at('3DSGLOBALSTATUS');
  const ruleApplied = at('RULE APPLIED');
  const extraPositions = exportColumns.flatMap((column, position) => (column === null ? [position] : []));
  const extraNames = extraPositions.map((position) => names[position]!);

  const text = (values: string[], position: number): string | null =>
    position < 0 ? null : emptyToNull(values[position]!);

  const extraOf = (values: string[]): Record<string, string> | null => {
    if (extraPositions.length === 0) return null;
    const extra: Record<string, string> = {};
    for (let i = 0; i < extraPositions.length; i++) extra[extraNames[i]!] = values[extraPositions[i]!]!;
    return extra;
  };

  return function normalizeRecord(values: string[]): NormalizeResult {
    if (values.length !== width) return reject(`expected ${width} columns, found ${values.length}`);

    const id = values[transactionId]!;
    if (isBlank(id)) return reject(`${names[transactionId]}: ${quoteValue(id)} is empty; every row needs one`);

    const outside = outsideScope?.(values);
    if (outside !== undefined) return reject(outside);

    let currencyCode: string | null = null;
    if (currency >= 0 && !isBlank(values[currency]!)) {
      const result = normalizeCurrency(values[currency]!);
      if (result instanceof RuleViolation) return violated(names[currency]!, result);
      currencyCode = result;
    }

    let amountMinor: bigint | null = null;
    if (amount >= 0 && !isBlank(values[amount]!)) {
      const result = normalizeAmount(values[amount]!, currencyCode);
      if (result instanceof RuleViolation) return violated(names[amount]!, result);
      amountMinor = result;
    }

    let feesMinor: bigint | null = null;
    if (fees >= 0 && !isBlank(values[fees]!)) {
      const result = normalizeAmount(values[fees]!, currencyCode);
      if (result instanceof RuleViolation) return violated(names[fees]!, result);
      feesMinor = result;
    }

    let occurredAt: string | null = null;
    if (date >= 0 && !isBlank(values[date]!)) {
      const result = toUtcInstant(values[date]!);
      if (result instanceof RuleViolation) return violated(names[date]!, result);
      occurredAt = result;
    }

    let exec: string | null = null;
    if (execCode >= 0 && !isBlank(values[execCode]!)) {
      const result = normalizeExecCode(values[execCode]!);
      if (result instanceof RuleViolation) return violated(names[execCode]!, result);
      exec = result;
    }

    let scheduleIndex: number | null = null;
    let scheduleCount: number | null = null;
    if (schedule >= 0 && !isBlank(values[schedule]!)) {
      const result = normalizePosition(values[schedule]!);
      if (result instanceof RuleViolation) return violated(names[schedule]!, result);
      scheduleIndex = result.index;
      scheduleCount = result.count;
    }

    let retryIndex: number | null = null;
    let retryCount: number | null = null;
    if (retry >= 0 && !isBlank(values[retry]!)) {
      const result = normalizePosition(values[retry]!);
      if (result instanceof RuleViolation) return violated(names[retry]!, result);
      retryIndex = result.index;
      retryCount = result.count;
    }

    return {
      ok: true,
      row: {
        transaction_id: id,
        identifier: text(values, identifier),
        order_id: text(values, orderId),
        operation_type: text(values, operationType),
        occurred_at: occurredAt,
        amount_minor: amountMinor,
        currency: currencyCode,
        exec_code: exec,
        fees_minor: feesMinor,
        schedule_index: scheduleIndex,
        schedule_count: scheduleCount,
        retry_index: retryIndex,
        retry_count: retryCount,
        client_email: text(values, clientEmail),
        client_address: text(values, clientAddress),
        card_full_name: text(values, cardFullName),
        card_type: text(values, cardType),
        card_country: text(values, cardCountry),
        three_d_secure: text(values, threeDSecure),
        three_ds_global_status: text(values, threeDsGlobalStatus),
        rule_applied: text(values, ruleApplied),
        extra: extraOf(values),
      },
    };
  };
}

function reject(reason: string): NormalizeResult {
  return { ok: false, reason };
}

function violated(column: string, violation: RuleViolation): NormalizeResult {
  return { ok: false, reason: `${column}: ${violation.reason}` };
}
