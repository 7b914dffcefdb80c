/**
 * How one kind of setting reads its variable. `parse` gets the variable's text, set and not blank,
 * and returns the setting's value. On a bad value it throws an Error whose message is the rule
 * broken, without the variable's name: `must be an integer from 0 to 65535 (got "abc")`.
 * `valueOf` returns another setting's value by its variable's name, for a rule that depends on it.
 */
export interface Kind<T> {
  parse(raw: string, valueOf: (env: string) => unknown): T;
}

/** One setting: the variable it is read from, how, its default and what it means. */
export interface Setting<T> {
  /** Name of the environment variable. */
  env: string;
  kind: Kind<T>;
  /** The value when the variable is unset or blank. */
  default: T;
  /** What the setting does, as the configuration table shows it (markdown, no links). */
  description: string;
  /** The table shows "a built-in constant" instead of the default (or "unset"). */
  secret?: boolean;
  /** How the table shows the default, when the value alone would not say what it means. */
  shownDefault?: string;
  /**
   * The title of the docs' section that says more (a heading of README.md, CONTRIBUTING.md or
   * docs/), e.g. `Traces`: the table's generator links it, wherever that section is.
   */
  see?: string;
}

/**
 * Declares a setting, a row of the table: variable, kind, default, description. The default must
 * be a value of the kind, or null for a setting that may stay unset.
 */
export function setting<T, D extends T | null>(
  env: string,
  kind: Kind<T>,
  fallback: D,
  description: string,
  options: Pick<Setting<T>, 'secret' | 'shownDefault' | 'see'> = {},
): Setting<T | D> {
  return { env, kind, default: fallback, description, ...options };
}
