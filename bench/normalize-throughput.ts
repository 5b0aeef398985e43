/**
 * How fast the record normalizer runs, on its own: `node bench/normalize-throughput.ts [records] [zone]`.
 * Not a test (speed is never asserted by tests); a measurement to run by hand when the hot path changes.
 * Records are made in batches outside the timed part, shaped like the service's exports (every column, EUR and
 * JPY amounts, dates a few seconds apart across a month), so only normalization is timed.
 */
import { planHeader } from '../src/normalize/header-plan.ts';
import { createRecordNormalizer } from '../src/normalize/record-normalizer.ts';
import { EXPORT_COLUMNS } from '@recon/protocol';

const HEADER: string[] = [...EXPORT_COLUMNS];
const BATCH = 5000;

const total = Number(process.argv[2] ?? 1_000_000);
const zone = process.argv[3] ?? 'Europe/Paris';
const normalize = createRecordNormalizer(planHeader(HEADER, 'generated'), { timezone: zone });
const start = Date.UTC(2024, 9, 1);

function record(n: number): string[] {
  const date = new Date(start + n * 2_600).toISOString();
  const cents = (n * 7919) % 1_000_000;
  return [
    'merchant-1',
    `${date.slice(0, 10)} ${date.slice(11, 19)}`,
    `TX${n}`,
    `ORDER-${n >> 1}`,
    'payment',
    `${Math.floor(cents / 100)}.${n % 10 === 0 ? '00' : String(cents % 100).padStart(2, '0')}`,
    n % 10 === 0 ? 'JPY' : 'EUR',
    n % 10 === 0 ? '0.00' : '0.35',
    n % 17 === 0 ? '4001' : '0',
    `client${n}@example.org`,
    '1 rue de la Paix',
    'JEAN DUPONT',
    'visa',
    'FR',
    'yes',
    n % 3 === 0 ? '' : 'OK',
    '',
    n % 5 === 0 ? '[1-3]' : '',
    '',
  ];
}

let elapsedNs = 0n;
let cpuMicros = 0;
let accepted = 0;
for (let done = 0; done < total; done += BATCH) {
  const batch = Array.from({ length: Math.min(BATCH, total - done) }, (_, i) => record(done + i));
  const began = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  for (const values of batch) if (normalize(values).ok) accepted++;
  const cpu = process.cpuUsage(cpuBefore);
  elapsedNs += process.hrtime.bigint() - began;
  cpuMicros += cpu.user + cpu.system;
}
// CPU time too: on a shared machine the wall clock also counts other processes' turns.
const seconds = Number(elapsedNs) / 1e9;
const cpuSeconds = cpuMicros / 1e6;
const rate = (s: number) => Math.round(total / s).toLocaleString('en-US');
console.log(
  `${total} records (${accepted} accepted), zone ${zone}: ${seconds.toFixed(3)} s wall, ${rate(seconds)} records/s; ` +
    `${cpuSeconds.toFixed(3)} s CPU, ${rate(cpuSeconds)} records per CPU second`,
);
