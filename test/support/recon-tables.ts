/** The tables of schema recon after every migration, sorted: what the migration tests expect to find. */
export const RECON_TABLES = [
  'deliveries',
  'delivery_chunks',
  'export_requests',
  'files',
  'nightly_runs',
  'notifications',
  'order_imports',
  'orders',
  'reconciliation_runs',
  'rejected_order_rows',
  'rejected_rows',
  'run_scope_orders',
  'run_totals',
  'schema_migrations',
  'transactions',
  'verdicts',
];
