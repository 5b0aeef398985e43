/**
 * The advisory lock a writer of verdicts holds: two runs at once would each read the other's verdicts half-written,
 * and retention must not remove a version a run is moving. Runs and pruning batches take turns.
 */
export const RECONCILE_LOCK = 0x7265636f6e01;
