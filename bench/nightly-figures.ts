/**
 * The arithmetic of `npm run bench:nightly`, apart from its processes and databases: spreads of durations, where a
 * nightly run's time went, and the one export file its reference ingests.
 */

export interface Spread {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
}

/** The nearest-rank percentile `p` (0-100] of `values`; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function spread(values: readonly number[]): Spread {
  return {
    n: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
  };
}

/** One export request of the run, as its timestamps say (milliseconds since the epoch; null when not reached). */
export interface RequestTimes {
  readonly sentAt: number | null;
  readonly deliveredAt: number | null;
  readonly ingestedAt: number | null;
}

/** One job of the queue: when it was created, taken and completed (milliseconds since the epoch). */
export interface JobTimes {
  readonly createdOn: number;
  readonly startedOn: number | null;
  readonly completedOn: number | null;
}

export interface RunTimes {
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly reconcileStartedAt: number;
  readonly reconcileFinishedAt: number;
}

/** Where a nightly run's time went, in seconds: spans from the run's start, and spreads per file and per job. */
export interface Breakdown {
  readonly totalSeconds: number;
  /** From the run's start to the last request sent. */
  readonly requestsSentBy: number;
  /** From the run's start to the first and the last delivery stored. */
  readonly firstDeliveryAt: number;
  readonly lastDeliveryAt: number;
  /** From the run's start to the last export ingested. */
  readonly lastIngestAt: number;
  /** Each delivery's ingest job, from taken to completed. */
  readonly ingestJob: Spread;
  /** Each ingest job's wait in the queue, from created to taken. */
  readonly queueWait: Spread;
  /** Each advance job of the run, from taken to completed, and their sum. */
  readonly advanceJob: Spread & { readonly totalSeconds: number };
  readonly reconcileSeconds: number;
  /** From the last export ingested to the reconciliation's start: the advance that notices the run is complete. */
  readonly lastIngestToReconcile: number;
}

const seconds = (ms: number) => ms / 1000;
const latest = (values: readonly (number | null)[]) =>
  values.reduce<number>((max, v) => (v !== null && v > max ? v : max), Number.NEGATIVE_INFINITY);
const earliest = (values: readonly (number | null)[]) =>
  values.reduce<number>((min, v) => (v !== null && v < min ? v : min), Number.POSITIVE_INFINITY);

function taken(jobs: readonly JobTimes[]): number[] {
  return jobs.flatMap((job) =>
    job.startedOn !== null && job.completedOn !== null ? [job.completedOn - job.startedOn] : [],
  );
}

export function breakdown(
  run: RunTimes,
  requests: readonly RequestTimes[],
  ingestJobs: readonly JobTimes[],
  advanceJobs: readonly JobTimes[],
): Breakdown {
  const since = (at: number) => seconds(at - run.startedAt);
  const lastIngest = latest(requests.map((r) => r.ingestedAt));
  const advance = taken(advanceJobs).map(seconds);
  return {
    totalSeconds: since(run.finishedAt),
    requestsSentBy: since(latest(requests.map((r) => r.sentAt))),
    firstDeliveryAt: since(earliest(requests.map((r) => r.deliveredAt))),
    lastDeliveryAt: since(latest(requests.map((r) => r.deliveredAt))),
    lastIngestAt: since(lastIngest),
    ingestJob: spread(taken(ingestJobs).map(seconds)),
    queueWait: spread(
      ingestJobs.flatMap((job) => (job.startedOn === null ? [] : [seconds(job.startedOn - job.createdOn)])),
    ),
    advanceJob: { ...spread(advance), totalSeconds: advance.reduce((sum, s) => sum + s, 0) },
    reconcileSeconds: seconds(run.reconcileFinishedAt - run.reconcileStartedAt),
    lastIngestToReconcile: seconds(run.reconcileStartedAt - lastIngest),
  };
}

/**
 * The csv exports of one run as one export: the header once, then every file's rows in turn. The files must share
 * their header (a run asks every batch for the same columns).
 */
export function joinExportCsvs(csvs: readonly string[]): string {
  let header: string | undefined;
  const parts: string[] = [];
  for (const [index, csv] of csvs.entries()) {
    const text = csv.replace(/^\uFEFF/, '');
    const end = text.indexOf('\n');
    const first = end === -1 ? text : text.slice(0, end + 1);
    if (header === undefined) {
      header = first;
      parts.push(first);
    } else if (first.trimEnd() !== header.trimEnd()) {
      throw new Error(`export ${index + 1} has another header than the first: ${first.trimEnd().slice(0, 80)}`);
    }
    const rows = end === -1 ? '' : text.slice(end + 1);
    parts.push(rows === '' || rows.endsWith('\n') ? rows : `${rows}\n`);
  }
  return parts.join('');
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** The CPU seconds (user and system) a process has used, from the text of its /proc/PID/stat. */
export function cpuSecondsOfStat(stat: string): number {
  // The command name, in parentheses, may hold spaces and parentheses: the fields are counted after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}
