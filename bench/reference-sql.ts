/** The benchmark's reference: the export loaded by psql \\copy into text columns, normalized by one SQL upsert. */
export const STAGING_COLUMNS = [
  'identifier',
  'date',
  'transactionid',
  'orderid',
  'operationtype',
  'amount',
  'currency',
  'billingfees',
  'execcode',
  'clientemail',
  'clientaddress',
  'cardfullname',
  'cardtype',
  'cardcountry',
  'threedsecure',
  'threedsglobalstatus',
  'ruleapplied',
  'schedule',
  'retry',
];

const minorUnits = "(CASE currency WHEN 'JPY' THEN 1 WHEN 'KWD' THEN 1000 WHEN 'BHD' THEN 1000 ELSE 100 END)";
const position = (column: string, part: 1 | 2) =>
  `nullif(split_part(btrim(nullif(${column}, ''), '[]'), '-', ${part}), '')::smallint`;

/**
 * The reference's normalization, in SQL: what recon does in TypeScript, done by the server.
 *
 * `full` writes recon.transactions (with its foreign key to recon.files) and keeps the last row of each id
 * (DISTINCT ON, a sort), as the ingest issue first set it. `lean` is what a skilled engineer would write by
 * hand for an export that holds each id once: no DISTINCT ON, into a table with recon.transactions' columns
 * and three indexes but no foreign key (see LEAN_TABLE_SQL).
 */
export function referenceUpsert(variant: 'full' | 'lean'): string {
  const full = variant === 'full';
  return `
INSERT INTO ${full ? 'recon.transactions' : LEAN_TABLE} AS t (transaction_id, identifier, order_id, operation_type, occurred_at, amount_minor,
  currency, exec_code, fees_minor, schedule_index, schedule_count, retry_index, retry_count, client_email,
  client_address, card_full_name, card_type, card_country, three_d_secure, three_ds_global_status, rule_applied,
  file_id, line)
SELECT ${full ? 'DISTINCT ON (transactionid) ' : ''}transactionid, nullif(identifier, ''), nullif(orderid, ''), nullif(operationtype, ''),
  (date::timestamp AT TIME ZONE 'UTC'), (amount::numeric * ${minorUnits})::bigint, nullif(currency, ''),
  lpad(execcode, 4, '0'), (nullif(billingfees, '')::numeric * ${minorUnits})::bigint,
  ${position('schedule', 1)}, ${position('schedule', 2)}, ${position('retry', 1)}, ${position('retry', 2)},
  nullif(clientemail, ''), nullif(clientaddress, ''), nullif(cardfullname, ''), nullif(cardtype, ''),
  nullif(cardcountry, ''), nullif(threedsecure, ''), nullif(threedsglobalstatus, ''), nullif(ruleapplied, ''),
  1, 0
FROM ref_staging${full ? ' ORDER BY transactionid' : ''}
ON CONFLICT (transaction_id) DO UPDATE SET identifier = excluded.identifier, order_id = excluded.order_id,
  operation_type = excluded.operation_type, occurred_at = excluded.occurred_at, amount_minor = excluded.amount_minor,
  currency = excluded.currency, exec_code = excluded.exec_code, fees_minor = excluded.fees_minor,
  schedule_index = excluded.schedule_index, schedule_count = excluded.schedule_count,
  retry_index = excluded.retry_index, retry_count = excluded.retry_count, client_email = excluded.client_email,
  client_address = excluded.client_address, card_full_name = excluded.card_full_name, card_type = excluded.card_type,
  card_country = excluded.card_country, three_d_secure = excluded.three_d_secure,
  three_ds_global_status = excluded.three_ds_global_status, rule_applied = excluded.rule_applied
WHERE (t.identifier, t.order_id, t.operation_type, t.occurred_at, t.amount_minor, t.currency, t.exec_code, t.fees_minor,
  t.schedule_index, t.schedule_count, t.retry_index, t.retry_count, t.client_email, t.client_address, t.card_full_name,
  t.card_type, t.card_country, t.three_d_secure, t.three_ds_global_status, t.rule_applied)
  IS DISTINCT FROM (excluded.identifier, excluded.order_id, excluded.operation_type, excluded.occurred_at,
  excluded.amount_minor, excluded.currency, excluded.exec_code, excluded.fees_minor, excluded.schedule_index,
  excluded.schedule_count, excluded.retry_index, excluded.retry_count, excluded.client_email, excluded.client_address,
  excluded.card_full_name, excluded.card_type, excluded.card_country, excluded.three_d_secure,
  excluded.three_ds_global_status, excluded.rule_applied)`;
}

export const LEAN_TABLE = 'ref_lean_transactions';

/** recon.transactions' columns, defaults, primary key and indexes (order_id, file_id); LIKE copies no foreign key. */
export const LEAN_TABLE_SQL = `CREATE TABLE IF NOT EXISTS ${LEAN_TABLE} (LIKE recon.transactions INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`;
