/** recon's exit codes, shared by every command. */
export const EXIT = {
  ok: 0,
  usage: 1,
  failed: 2,
  rowsRejected: 3,
} as const;
