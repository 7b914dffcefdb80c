import type { Country } from './records.js';
import { randomUuid, type Prng } from './prng.js';
import { COUNTRIES, INDUSTRIES, type CountryVocab, type IndustryVocab } from './vocab.js';

/**
 * Shared helpers of the dataset generators: the time frame, fast flat strings,
 * ids, unique slugs, amounts and country lookups.
 */
export const DAY = 86_400_000;
export const SPAN = 3 * 365 * DAY;

/** A writable view of a readonly record shape (investor drafts). */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** What every generator shares: the fixed epoch and the seeded stream factory. */
export interface Frame {
  readonly epoch: number;
  readonly prngFor: (stream: string) => Prng;
}

/**
 * Returns `text` after making V8 flatten it: strings built by concatenation are
 * ropes of many small nodes, which would multiply the retained heap (and the
 * startup GC time) of ~700k generated strings.
 */
export function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}

const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
const dayPrefixes = new Map<number, string>();

/** `new Date(ms).toISOString()` for integer ms, several times faster (generation makes ~400k of them). */
export function iso(ms: number): string {
  const day = Math.floor(ms / DAY);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    prefix = new Date(day * DAY).toISOString().slice(0, 11);
    dayPrefixes.set(day, prefix);
  }
  let rest = ms - day * DAY;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return flat(
    `${prefix}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[rest - seconds * 1000]}Z`,
  );
}

/** A record id. sfc32 streams have 128-bit state, so ids of different streams do not collide in practice (a test checks). */
export function newId(prng: Prng): string {
  return flat(randomUuid(prng));
}

/** The first of `base` and `alternatives` not yet taken (else `base` plus a number), marked taken. */
export function uniqueSlug(
  base: string,
  taken: Set<string>,
  prng: Prng,
  alternatives: readonly string[],
): string {
  const tries = [base, ...alternatives];
  for (const candidate of tries) {
    if (!taken.has(candidate)) {
      taken.add(candidate);
      return candidate;
    }
  }
  for (;;) {
    const candidate = `${base}${prng.int(2, 9999)}`;
    if (!taken.has(candidate)) {
      taken.add(candidate);
      return candidate;
    }
  }
}

/** Rounds a positive amount to three significant digits, as press releases do. */
export function roundAmount(value: number): number {
  const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(value)) - 2);
  return Math.round(value / magnitude) * magnitude;
}

/** A log-uniform draw in [min, max): amounts spread over orders of magnitude. */
export function logUniform(prng: Prng, min: number, max: number): number {
  return Math.exp(Math.log(min) + prng.next() * (Math.log(max) - Math.log(min)));
}

/** Country lookups: weighted draw list, shared frozen `{code, name}` objects, by code. */
export const COUNTRY_WEIGHTS = COUNTRIES.map((c) => [c, c.weight] as const);
const COUNTRY_OBJECTS = new Map<string, Country>(
  COUNTRIES.map((c) => [c.code, Object.freeze({ code: c.code, name: c.name })]),
);
export const countryOf = (vocab: CountryVocab): Country =>
  COUNTRY_OBJECTS.get(vocab.code) as Country;
export const countryByCode = (code: string): CountryVocab =>
  COUNTRIES.find((c) => c.code === code) as CountryVocab;
/** The industry vocabulary of a group name. */
export const industryByGroup = (group: string): IndustryVocab =>
  INDUSTRIES.find((i) => i.group === group) as IndustryVocab;
