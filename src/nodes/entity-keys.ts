/** A federation representation: `__typename` and the fields of one of the type's keys. */
export type Representation = Readonly<Record<string, unknown>>;

/** A representation's field as a lookup key: a string that is not empty, else null. */
export function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `representation[field].uuid`, for keys through an embedded record (`company { uuid }`). */
export function uuidOf(representation: Representation, field: string): string | null {
  const embedded = representation[field];
  return typeof embedded === 'object' && embedded !== null
    ? text((embedded as Record<string, unknown>)['uuid'])
    : null;
}
