import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

/**
 * A synthetic export as the service writes it: all exportable columns, `;`-delimited, quoted headers
 * with spaces, AMOUNT in major units with two decimals, EXECCODE without leading zeros. About 165 bytes
 * a row. Deterministic, so two runs measure the same bytes.
 */
export const HEADER = [
  'IDENTIFIER',
  'DATE',
  'TRANSACTIONID',
  'ORDERID',
  'OPERATIONTYPE',
  'AMOUNT',
  'CURRENCY',
  '"BILLINGFEES INCL. VAT"',
  'EXECCODE',
  'CLIENTEMAIL',
  'CLIENTADDRESS',
  'CARDFULLNAME',
  'CARDTYPE',
  'CARDCOUNTRY',
  '3DSECURE',
  '3DSGLOBALSTATUS',
  '"RULE APPLIED"',
  'SCHEDULE',
  'RETRY',
].join(';');

const OPERATIONS = ['payment', 'authorization', 'capture', 'refund'];
const CARDS = ['VISA', 'MASTERCARD', 'CB', 'AMEX'];
const COUNTRIES = ['FR', 'DE', 'ES', 'IT', 'BE', 'NL'];
const NAMES = ['Jean Dupont', 'Anna Schmidt', 'Lucia Garcia', 'Marco Rossi', 'Eva de Vries'];

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

export function exportRow(i: number, random: () => number): string {
  const day = 1 + (i % 28);
  const seconds = i % 86400;
  const date = `2026-10-${pad(day, 2)} ${pad(Math.floor(seconds / 3600), 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}`;
  const cents = 1000 + Math.floor(random() * 200000);
  const amount = `${Math.floor(cents / 100)}.${pad(cents % 100, 2)}`;
  const fees = `0.${pad(10 + (cents % 89), 2)}`;
  const exec = random() < 0.9 ? '0' : random() < 0.5 ? '4001' : '2';
  const name = NAMES[i % NAMES.length]!;
  const instalment = i % 5 === 0;
  const schedule = instalment ? `[${1 + (i % 3)}-3]` : '';
  const retry = i % 50 === 0 ? '[1-2]' : '';
  // Every 20th address holds the delimiter, so the quoted path of the parser is exercised at scale.
  const address =
    i % 20 === 0
      ? `"${10 + (i % 90)} rue de Rivoli; Bât. B, 75001 Paris"`
      : `${10 + (i % 90)} rue de Rivoli 75001 Paris`;
  return [
    'MERCHANT01',
    date,
    `TX${pad(i, 12)}`,
    `ORD-${pad(Math.floor(i / 2), 10)}`,
    OPERATIONS[i % 4],
    amount,
    'EUR',
    fees,
    exec,
    `client${i % 100000}@example.com`,
    address,
    name,
    CARDS[i % 4],
    COUNTRIES[i % 6],
    i % 3 === 0 ? 'yes' : 'no',
    i % 3 === 0 ? 'Y' : '',
    i % 7 === 0 ? 'velocity' : '',
    schedule,
    retry,
  ].join(';');
}

/** Writes `rows` rows to `path`. `variant: 'reordered'` writes the same rows last-first, after a BOM and with CRLF. */
export async function generateExport(
  path: string,
  rows: number,
  variant: 'plain' | 'reordered' = 'plain',
): Promise<number> {
  const out = createWriteStream(path);
  const eol = variant === 'plain' ? '\n' : '\r\n';
  let bytes = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  await write((variant === 'reordered' ? '\uFEFF' : '') + HEADER + eol);
  const random = mulberry32(42);
  // Rows are generated in blocks so the reordered variant holds the same values: the PRNG is advanced per row index.
  const block = 10_000;
  for (let start = 0; start < rows; start += block) {
    const end = Math.min(rows, start + block);
    const lines: string[] = [];
    for (let i = start; i < end; i++) lines.push(exportRow(i, random));
    if (variant === 'reordered') lines.reverse();
    await write(lines.join(eol) + eol);
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}
