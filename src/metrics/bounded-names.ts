/** A GraphQL name, as the spec defines one. */
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/**
 * Label values from a bounded set: the first `max` distinct names seen (each a GraphQL name of at
 * most `maxLength` characters) pass as they are; any other name is `other`, and no name is
 * `empty` (`unnamed`). A client that sends a new operation name with every request adds one series at
 * most, not one per request.
 */
export class BoundedNames {
  readonly #seen = new Set<string>();

  constructor(
    private readonly max: number,
    private readonly empty = 'unnamed',
    private readonly maxLength = 64,
  ) {}

  label(name: string | null | undefined): string {
    if (!name) return this.empty;
    if (this.#seen.has(name)) return name;
    if (this.#seen.size >= this.max || name.length > this.maxLength || !NAME.test(name)) {
      return 'other';
    }
    this.#seen.add(name);
    return name;
  }
}
