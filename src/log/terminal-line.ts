/**
 * A log record as one readable line for a terminal: `07:31:02 INFO  delivery received  delivery=12 bytes=1234`.
 * Local time of day, the level, the message, then every other field as key=value (nested ones by their dotted
 * path). A few lines of our own rather than pino-pretty, whose dozen dependencies and worker thread would serve
 * only this one format.
 */

/** Fields every record has, shown in the line's head or left out as noise on a terminal. */
const HEAD_FIELDS: ReadonlySet<string> = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name']);

export function formatTerminalLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = timeOfDay(record.time);
  const level = headText(record.level).toUpperCase();
  const fields = Object.entries(record)
    .filter(([key]) => !HEAD_FIELDS.has(key))
    .flatMap(([key, value]) => flatten(key, value))
    .map(([key, value]) => `${key}=${value}`);
  const message = headText(record.msg);
  return `${[time, level.padEnd(5), message].join(' ')}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}\n`;
}

/** A destination for pino that writes each record as a terminal line to `stream`. */
export function terminalDestination(stream: { write(text: string): unknown }): { write(line: string): void } {
  return { write: (line) => void stream.write(formatTerminalLine(line)) };
}

/** A head field as text: absent is empty, and an object (never written by pino) shows as JSON, not [object Object]. */
function headText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

function timeOfDay(time: unknown): string {
  const date = typeof time === 'string' || typeof time === 'number' ? new Date(time) : undefined;
  if (!date || Number.isNaN(date.getTime())) return '--:--:--';
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

function flatten(key: string, value: unknown): [string, string][] {
  if (value !== null && typeof value === 'object' && !Array.isArray(value))
    return Object.entries(value).flatMap(([inner, innerValue]) => flatten(`${key}.${inner}`, innerValue));
  return [[key, show(value)]];
}

/** Bare when it reads unambiguously, quoted (JSON) when it has spaces, quotes or an `=`. */
function show(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}
