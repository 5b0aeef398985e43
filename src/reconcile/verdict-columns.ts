/**
 * The columns a verdict version has wherever it is kept: recon.verdicts (which adds recheck_at) and
 * recon.verdict_history (which adds until_run_id). One list, so that moving a version between them names them all.
 */
export const VERDICT_COLUMNS = [
  'run_id',
  'order_id',
  'known_order',
  'status',
  'lifecycle',
  'first_seen_run_id',
  'first_seen_at',
  'expected_minor',
  'settled_minor',
  'delta_minor',
  'currency',
  'transaction_ids',
  'warnings',
  'explanation',
  'rejudged_run_id',
  'at_risk_minor',
] as const;
