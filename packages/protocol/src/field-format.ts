import { z } from 'zod';
import { splitColumns } from './export-columns.ts';
import type { EnumFormat, FieldFormat } from './field-dictionary.ts';
import { isCountryCode } from './iso-3166.ts';
import { isCurrencyCode } from './iso-4217.ts';
import { isTimeZone } from './time-zone.ts';

const INTEGER = /^(0|[1-9][0-9]*)$/;
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const emailSchema = z.email();
const ipv4Schema = z.ipv4();

/** Whether a wire value is valid for a format; pure, so every schema and validator agrees. */
export function matchesFormat(format: FieldFormat, value: string): boolean {
  switch (format.kind) {
    case 'text': {
      const length = format.bytes ? Buffer.byteLength(value, 'utf8') : [...value].length;
      return length >= format.min && (format.max === undefined || length <= format.max);
    }
    case 'enum':
      return canonicalValue(format, value) !== undefined;
    case 'integer':
      return INTEGER.test(value) && inRange(BigInt(value), format.min, format.max);
    case 'digits':
      return new RegExp(format.upTo ? `^[0-9]{1,${format.length}}$` : `^[0-9]{${format.length}}$`).test(value);
    case 'decimal':
      return DECIMAL.test(value);
    case 'email':
      return value.length >= format.min && value.length <= format.max && emailSchema.safeParse(value).success;
    case 'ipv4':
      return ipv4Schema.safeParse(value).success;
    case 'date':
      return isCalendarDate(value);
    case 'country':
      return isCountryCode(value);
    case 'currency':
      return isCurrencyCode(value);
    case 'hex':
      return new RegExp(`^[0-9a-fA-F]{${format.length}}$`).test(value);
    case 'base64':
      return value.length % 4 === 0 && BASE64.test(value);
    case 'url':
      return value.length >= format.min && value.length <= format.max && isHttpUrl(value);
    case 'timezone':
      return value.length >= 1 && value.length <= format.max && isTimeZone(value);
    case 'columns':
      return splitColumns(value).every((name) => name !== '');
  }
}

/** An enumerated value as the dictionary lists it (`GZIP` → `gzip` where any case is taken); undefined when not one. */
export function canonicalValue(format: EnumFormat, value: string): string | undefined {
  if (format.values.includes(value)) return value;
  if (!format.anyCase) return undefined;
  const lower = value.toLowerCase();
  return format.values.find((listed) => listed.toLowerCase() === lower);
}

/** What a format expects, for the "invalid parameter X: expected ..." message. */
export function describeFormat(format: FieldFormat): string {
  switch (format.kind) {
    case 'text': {
      const unit = format.bytes ? 'bytes' : 'characters';
      if (format.max === undefined) return format.min > 0 ? `at least ${format.min} ${unit}` : 'a string';
      return format.min === format.max ? `exactly ${format.max} ${unit}` : `${format.min}-${format.max} ${unit}`;
    }
    case 'enum':
      return `one of ${format.values.join(', ')}${format.anyCase ? ' (any letter case)' : ''}`;
    case 'integer':
      return format.max !== undefined
        ? `an integer from ${format.min ?? 0} to ${format.max}`
        : `an integer of at least ${format.min ?? 0}, digits only`;
    case 'digits':
      return format.upTo ? `1-${format.length} digits` : `exactly ${format.length} digits`;
    case 'decimal':
      return 'a decimal number with a dot separator';
    case 'email':
      return `an e-mail address of ${format.min}-${format.max} characters`;
    case 'ipv4':
      return 'an IPv4 address';
    case 'date':
      return 'a date YYYY-MM-DD';
    case 'country':
      return 'an ISO 3166-1 alpha-2 country code';
    case 'currency':
      return 'an ISO 4217 currency code';
    case 'hex':
      return `${format.length} hexadecimal characters`;
    case 'base64':
      return 'base64 text';
    case 'url':
      return `an http(s) URL of ${format.min}-${format.max} characters`;
    case 'timezone':
      return 'an IANA time zone name';
    case 'columns':
      return 'export column names separated by ;, none empty';
  }
}

function inRange(value: bigint, min: number | undefined, max: number | undefined): boolean {
  return (min === undefined || value >= BigInt(min)) && (max === undefined || value <= BigInt(max));
}

/** YYYY-MM-DD naming a day that exists: Date.parse takes 2026-02-30 (as March 2), which PostgreSQL refuses. */
export function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isHttpUrl(value: string): boolean {
  const url = URL.parse(value);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:');
}
