import type { Setting } from './setting.js';

/** A table of settings, by the property of the parsed values each one fills. */
export type Settings = Record<string, Setting<unknown>>;

/** What a table of settings parses to: one value per property. */
export type SettingValues<S extends Settings> = {
  [K in keyof S]: S[K] extends Setting<infer T> ? T : never;
};

/**
 * Reads every setting of `settings` from `env`; an unset or blank variable gives the default.
 * Throws one Error with a line per bad variable, e.g.
 * `PORT must be an integer from 0 to 65535 (got "abc")`.
 */
export function parseSettings<S extends Settings>(
  settings: S,
  env: NodeJS.ProcessEnv,
): SettingValues<S> {
  const byEnv = new Map(Object.values(settings).map((s) => [s.env, s]));
  const values = new Map<string, unknown>();
  const problems: string[] = [];
  // Parses on first use, so a setting read by another's rule is parsed first, whatever the order.
  const valueOf = (name: string): unknown => {
    if (values.has(name)) return values.get(name);
    const setting = byEnv.get(name);
    if (!setting) throw new Error(`refers to ${name}, which is not a setting`);
    // A bad value leaves the default, so the settings that depend on it are still checked.
    let value = setting.default;
    const raw = env[name];
    if (raw !== undefined && raw.trim() !== '') {
      try {
        value = setting.kind.parse(raw, valueOf);
      } catch (error) {
        problems.push(`${name} ${(error as Error).message}`);
      }
    }
    values.set(name, value);
    return value;
  };
  const parsed = Object.fromEntries(
    Object.entries(settings).map(([property, s]) => [property, valueOf(s.env)]),
  );
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return parsed as SettingValues<S>;
}
