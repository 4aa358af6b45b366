import { describe, hashTagMessage, hashTagProblem, MAX_GROUP_KEYS } from '../../core';
import { LockKeyError } from '../../errors';

/** Builds a lock key from a method's arguments. */
export type KeyBuilder = (args: readonly unknown[]) => string;

/** A `<N>` or `<N.a.b>` placeholder. */
interface Placeholder {
  source: string;
  index: number;
  path: string[];
}

const PLACEHOLDER = /^(0|[1-9]\d*)((?:\.(?:[A-Za-z_$][\w$]*|0|[1-9]\d*))*)$/;
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * Parses a key template such as `order:<0>` or `order:<0.id>:<1>`, where `<N>` is argument N
 * and `<N.a.b>` a property path into it. Throws LockKeyError for a malformed template (or one
 * with a lone surrogate), an index past `paramCount` (when known), a placeholder that can never
 * render for its parameter's declared type (`paramTypes`, TypeScript's `design:paramtypes`, when
 * emitted), or a key without placeholders whose hash tag is not well formed (see hashTagProblem).
 * `where` names the method in messages.
 */
export function compileKeyTemplate(
  template: unknown,
  paramCount: number | undefined,
  where: string,
  paramTypes?: readonly unknown[],
): KeyBuilder {
  if (typeof template !== 'string' || template.length === 0) {
    throw new LockKeyError(
      `${where}: a key template must be a non-empty string such as 'order:<0>', got ${describe(template)}.`,
    );
  }
  if (!template.isWellFormed()) {
    throw templateError(
      template,
      where,
      'it has a lone UTF-16 surrogate (not well-formed unicode)',
    );
  }
  const parts: (string | Placeholder)[] = [];
  let position = 0;
  while (position < template.length) {
    const open = template.indexOf('<', position);
    const close = template.indexOf('>', position);
    if (close >= 0 && (open < 0 || close < open)) {
      throw templateError(template, where, `a '>' at position ${close} has no opening '<'`);
    }
    if (open < 0) {
      parts.push(template.slice(position));
      break;
    }
    if (open > position) parts.push(template.slice(position, open));
    if (close < 0) {
      throw templateError(template, where, `the '<' at position ${open} is never closed with '>'`);
    }
    const source = template.slice(open + 1, close);
    const match = PLACEHOLDER.exec(source);
    if (!match) {
      throw templateError(
        template,
        where,
        `'<${source}>' is not a placeholder: write <N> for argument N or <N.prop.sub> for a property path`,
      );
    }
    const index = Number(match[1]);
    const path = match[2] ? match[2].slice(1).split('.') : [];
    const forbidden = path.find((segment) => FORBIDDEN_SEGMENTS.has(segment));
    if (forbidden) {
      throw templateError(template, where, `'<${source}>' reads '${forbidden}', which is not data`);
    }
    if (paramCount !== undefined && index >= paramCount) {
      throw templateError(
        template,
        where,
        `'<${source}>' refers to argument ${index}, but the method declares ${paramCount} parameter${paramCount === 1 ? '' : 's'} (arguments count from 0)`,
      );
    }
    const misfit = paramTypes && declaredMisfit(paramTypes[index], index, source, path);
    if (misfit) throw templateError(template, where, misfit, 'never fits its parameter');
    parts.push({ source, index, path });
    position = close + 1;
  }
  // A key without placeholders is checked now; others when built (see lockName).
  const tag =
    parts.length <= 1 && typeof parts[0] === 'string' ? hashTagProblem(template) : undefined;
  if (tag !== undefined) {
    throw new LockKeyError(hashTagMessage(`${where}: lock key ${describe(template)}`, tag));
  }
  return (args) => {
    let key = '';
    for (const part of parts) {
      key += typeof part === 'string' ? part : render(part, args, template, where);
    }
    return key;
  };
}

/** Validates the result of a user key function (`@Locked({ key: (...args) => … })`). */
export function checkBuiltKey(key: unknown, where: string): string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new LockKeyError(
      `${where}: the key function must return a non-empty string, returned ${describe(key)}. The method was not run.`,
    );
  }
  return key;
}

/**
 * Parses the templates of a multi-lock's keys (`['account:<0>', 'account:<1>']`, see
 * compileKeyTemplate): LockKeyError unless a non-empty list of at most MAX_GROUP_KEYS templates.
 */
export function compileKeyTemplates(
  templates: unknown,
  paramCount: number | undefined,
  where: string,
  paramTypes?: readonly unknown[],
): (args: readonly unknown[]) => string[] {
  if (!Array.isArray(templates)) {
    throw new LockKeyError(
      `${where}: keys must be a list of key templates, got ${describe(templates)}.`,
    );
  }
  checkKeyCount(templates.length, where, 'key templates');
  const builders = templates.map((template) =>
    compileKeyTemplate(template, paramCount, where, paramTypes),
  );
  return (args) => builders.map((build) => build(args));
}

/** Validates the result of a user keys function (`@Locked({ keys: (...args) => […] })`). */
export function checkBuiltKeys(keys: unknown, where: string): string[] {
  if (!Array.isArray(keys)) {
    throw new LockKeyError(
      `${where}: the keys function must return a list of keys, returned ${describe(keys)}. The method was not run.`,
    );
  }
  checkKeyCount(keys.length, where, 'keys');
  return keys.map((key) => checkBuiltKey(key, where));
}

function checkKeyCount(count: number, where: string, what: string): void {
  if (count === 0 || count > MAX_GROUP_KEYS) {
    throw new LockKeyError(
      `${where}: a multi-lock takes from 1 to ${MAX_GROUP_KEYS} ${what}, got ${count}.`,
    );
  }
}

function render(
  placeholder: Placeholder,
  args: readonly unknown[],
  template: string,
  where: string,
) {
  let value: unknown = args[placeholder.index];
  let reached = `argument ${placeholder.index}`;
  for (const segment of placeholder.path) {
    if (value === null || value === undefined || typeof value !== 'object') {
      throw valueError(
        template,
        where,
        placeholder,
        `${reached} is ${describe(value)}, so it has no property '${segment}'`,
      );
    }
    value = (value as Record<string, unknown>)[segment];
    reached += `.${segment}`;
  }
  switch (typeof value) {
    case 'string':
      if (value.length === 0)
        throw valueError(template, where, placeholder, `${reached} is an empty string`);
      return value;
    case 'number':
      if (!Number.isFinite(value))
        throw valueError(template, where, placeholder, `${reached} is ${value}`);
      return String(value);
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'undefined':
      throw valueError(template, where, placeholder, `${reached} is undefined`);
    case 'object':
      if (value === null) throw valueError(template, where, placeholder, `${reached} is null`);
      throw valueError(
        template,
        where,
        placeholder,
        `${reached} is ${describe(value)}; name the property to use, e.g. <${placeholder.source}.id>`,
      );
    default:
      throw valueError(
        template,
        where,
        placeholder,
        `${reached} is ${describe(value)}, not a string or number`,
      );
  }
}

/** Declared types whose values are primitives: a property path into them finds nothing. */
const PRIMITIVES = new Map<unknown, string>([
  [String, 'string'],
  [Number, 'number'],
  [Boolean, 'boolean'],
  [BigInt, 'bigint'],
  [Symbol, 'symbol'],
]);

/**
 * Why placeholder `<source>` can never render for a parameter declared as `type`: a path into a
 * primitive, or no path into a class instance (an object); undefined when it may render.
 * `Object` (interfaces, unions, any) tells nothing.
 */
function declaredMisfit(
  type: unknown,
  index: number,
  source: string,
  path: readonly string[],
): string | undefined {
  if (typeof type !== 'function' || type === Object) return undefined;
  const primitive = PRIMITIVES.get(type);
  if (primitive !== undefined) {
    if (path.length === 0) return undefined;
    return `'<${source}>' reads a property of argument ${index}, declared as a ${primitive}, which has none; use <${index}>`;
  }
  if (path.length > 0 || type === Function) return undefined;
  return `'<${source}>' is argument ${index} itself, declared as ${type.name || 'an object type'}: an object never makes a key; name the property to use, e.g. <${index}.id>`;
}

function templateError(
  template: string,
  where: string,
  problem: string,
  what = 'is malformed',
): LockKeyError {
  return new LockKeyError(`${where}: key template "${template}" ${what}: ${problem}.`);
}

function valueError(template: string, where: string, placeholder: Placeholder, problem: string) {
  return new LockKeyError(
    `${where}: cannot build lock key "${template}": <${placeholder.source}> has no usable value (${problem}). The method was not run.`,
  );
}
