import { assertKnownOptions } from './validate';

/** Checks one given value of an option: returns it typed, or throws LockOptionsError naming `option`. */
export type Check<T> = (value: unknown, option: string) => T;

/** One row of an option table: the option's check and, when it has one, its default. */
export interface OptionSpec<T = unknown> {
  readonly check: Check<T>;
  readonly default?: T;
}

/**
 * An option family: one row per option, in the order of the known-options list. Write a table
 * `{ … } as const satisfies OptionTableOf<TheOptionsInterface>`, so it has exactly the
 * interface's options and each check returns the option's type; the names
 * (`optionNames`), the resolved type (`ResolvedOptions`) and the defaults (`optionDefaults`)
 * derive from it.
 */
export type OptionTable = { readonly [name: string]: OptionSpec };

/** The table an options interface `O` needs: a row for every option, checking its type. */
export type OptionTableOf<O> = { readonly [K in keyof O]-?: OptionSpec<Exclude<O[K], undefined>> };

/** The type an option's check returns. */
export type CheckedType<S> = S extends { readonly check: (...args: never[]) => infer T }
  ? T
  : never;

/** Options of a family after resolving: an option with a default always has a value. */
export type ResolvedOptions<Table> = {
  readonly [K in keyof Table]: Table[K] extends { readonly default: unknown }
    ? CheckedType<Table[K]>
    : CheckedType<Table[K]> | undefined;
};

/** Given options of a family, checked: only those given, each of its checked type. */
export type CheckedOptions<Table> = { readonly [K in keyof Table]?: CheckedType<Table[K]> };

/** The defaults of a family: its options that have one. */
export type OptionDefaults<Table> = {
  readonly [
    K in keyof Table as Table[K] extends { readonly default: unknown } ? K : never
  ]: CheckedType<Table[K]>;
};

/** The option names of a family, in table order (for `assertKnownOptions` and its message). */
export function optionNames<Table extends OptionTable>(
  table: Table,
): readonly (keyof Table & string)[] {
  return Object.keys(table);
}

/** The defaults of a family, read from its table. */
export function optionDefaults<Table extends OptionTable>(table: Table): OptionDefaults<Table> {
  const defaults: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(table)) {
    if ('default' in spec) defaults[name] = spec.default;
  }
  return defaults as OptionDefaults<Table>;
}

/** A family without some options of another (a permit's options: a lock's less `mode`, …). */
export function withoutOptions<Table extends OptionTable, K extends keyof Table & string>(
  table: Table,
  names: readonly K[],
): Omit<Table, K> {
  const rest: Record<string, OptionSpec> = { ...table };
  for (const name of names) delete rest[name];
  return rest as Omit<Table, K>;
}

/**
 * Checks the options given, in the order given (an unknown name is refused first, a near miss
 * suggested), and returns them checked, without defaults: the per-call path. `undefined`
 * counts as not given.
 */
export function checkOptions<Table extends OptionTable>(
  table: Table,
  given: object,
  names: readonly string[] = optionNames(table),
): CheckedOptions<Table> {
  const checked: Record<string, unknown> = {};
  const keys = Object.keys(given);
  for (const name of keys) if (!Object.hasOwn(table, name)) assertKnownOptions(given, names);
  for (const name of keys) {
    const value = (given as Record<string, unknown>)[name];
    if (value !== undefined) checked[name] = table[name].check(value, name);
  }
  return checked as CheckedOptions<Table>;
}

/**
 * Checks the options given, in table order (an unknown name is refused first), and fills in the
 * table's defaults: every option of the family. `undefined` counts as not given.
 */
export function resolveOptions<Table extends OptionTable>(
  table: Table,
  given: object,
  names: readonly string[] = optionNames(table),
): ResolvedOptions<Table> {
  assertKnownOptions(given, names);
  const resolved: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(table)) {
    const value = (given as Record<string, unknown>)[name];
    resolved[name] = value === undefined ? spec.default : spec.check(value, name);
  }
  return resolved as ResolvedOptions<Table>;
}

/** The options of `table`'s family out of `values` (a larger family's resolved options). */
export function pickOptions<Table extends OptionTable, Values extends ResolvedOptions<Table>>(
  table: Table,
  values: Values,
): ResolvedOptions<Table> {
  const picked: Record<string, unknown> = {};
  for (const name of Object.keys(table)) picked[name] = values[name as keyof Values];
  return picked as ResolvedOptions<Table>;
}
