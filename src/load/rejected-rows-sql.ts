import { STAGING_TABLE } from './staging-table.ts';

/** Moves the staged rejected rows of a file into recon.rejected_rows. $1 file_id, $2 entry names by entry_index. */
export const INSERT_REJECTED_ROWS_SQL = `INSERT INTO recon.rejected_rows (file_id, entry, line, raw, reason)
SELECT $1, ($2::text[])[entry_index + 1], line, raw, reject_reason
FROM ${STAGING_TABLE}
WHERE reject_reason IS NOT NULL
ORDER BY entry_index, line`;
