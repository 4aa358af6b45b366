/**
 * Property-based tests of key templates against an independent reference of the rendering
 * rules (the rules lib/nest/decorators/key-template.ts implements, to be documented in the README):
 *
 * 1. A template is literal text with placeholders `<N>` or `<N.p.q>`. Literal text is copied as
 *    it is (any characters but `<` and `>`, braces and unicode included).
 * 2. N is a decimal argument index without leading zeros, below the method's parameter count.
 *    Each path segment is an ASCII identifier ([A-Za-z_$][A-Za-z0-9_$]*) or a decimal index
 *    without leading zeros; `__proto__`, `prototype` and `constructor` are refused.
 * 3. Any other `<…>`, or a `<` or `>` outside a placeholder, makes the template malformed:
 *    LockKeyError when the template is compiled (at decoration time).
 * 4. At call time a placeholder reads argument N, then each segment as a property; reading a
 *    property of anything that is not a non-null object fails. The value renders as String(v)
 *    when it is a non-empty string, a finite number, a bigint or a boolean; anything else
 *    (undefined, null, '', NaN, ±Infinity, objects, arrays, functions, symbols) fails with
 *    LockKeyError.
 * 5. A template without placeholders is a whole key: when it has braces but no well-formed hash
 *    tag (a `{`, later a `}`, something between), it is refused when compiled (a key built at
 *    call time is checked then, by the lock call).
 */
import fc from 'fast-check';
import { LockKeyError } from '../../../lib';
import { compileKeyTemplate } from '../../../lib/nest/decorators/key-template';

const where = '@Locked on Svc.method';
const PARAMS = 4;

type Part = string | { index: number; path: string[] };

const INDEX = /^(0|[1-9][0-9]*)$/;
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const FORBIDDEN = ['__proto__', 'prototype', 'constructor'];

/** Rule 5: no braces, or a first `{` followed later by a `}` with something between. */
const tagWellFormed = (key: string) => !/[{}]/.test(key) || /^[^{]*\{[^}]+\}/.test(key);

/** Reference parser: the parts of a well-formed template, or null when malformed (rule 1–3, 5). */
function referenceParse(template: string, params: number): Part[] | null {
  if (template.length === 0) return null;
  const parts: Part[] = [];
  let last = 0;
  for (const match of template.matchAll(/<([^<>]*)>/g)) {
    const text = template.slice(last, match.index);
    if (/[<>]/.test(text)) return null;
    if (text) parts.push(text);
    const [first, ...path] = match[1].split('.');
    if (!INDEX.test(first) || Number(first) >= params) return null;
    for (const segment of path) {
      if (!(IDENT.test(segment) || INDEX.test(segment)) || FORBIDDEN.includes(segment)) {
        return null;
      }
    }
    parts.push({ index: Number(first), path });
    last = match.index + match[0].length;
  }
  const tail = template.slice(last);
  if (/[<>]/.test(tail)) return null;
  if (tail) parts.push(tail);
  if (last === 0 && !tagWellFormed(template)) return null;
  return parts;
}

/** Reference renderer (rule 4): the key, or null when a value is unusable. */
function referenceRender(parts: Part[], args: unknown[]): string | null {
  let key = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      key += part;
      continue;
    }
    let value: unknown = args[part.index];
    for (const segment of part.path) {
      if (typeof value !== 'object' || value === null) return null;
      value = (value as Record<string, unknown>)[segment];
    }
    if (typeof value === 'string' && value !== '') key += value;
    else if (typeof value === 'number' && Number.isFinite(value)) key += String(value);
    else if (typeof value === 'bigint' || typeof value === 'boolean') key += String(value);
    else return null;
  }
  return key;
}

/** What the library does: the key, 'malformed' (compile error) or 'unusable' (render error). */
function libraryOutcome(template: string, args: unknown[]): string {
  let build: (args: readonly unknown[]) => string;
  try {
    build = compileKeyTemplate(template, PARAMS, where);
  } catch (error) {
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as Error).message).toContain(where);
    return 'malformed';
  }
  try {
    return `key:${build(args)}`;
  } catch (error) {
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as Error).message).toMatch(/The method was not run/);
    return 'unusable';
  }
}

function referenceOutcome(template: string, args: unknown[]): string {
  const parts = referenceParse(template, PARAMS);
  if (parts === null) return 'malformed';
  const key = referenceRender(parts, args);
  return key === null ? 'unusable' : `key:${key}`;
}

// ---- generators ----

/** Literal text: anything but angle brackets, with braces, dots, digits and unicode likely. */
const literal = fc.string({
  unit: fc.oneof(
    fc.constantFrom('{', '}', '.', ':', '0', '9', ' ', 'é', '漢', '🔒', '$', '_', '-'),
    fc.string({ minLength: 1, maxLength: 1 }).filter((c) => c !== '<' && c !== '>'),
  ),
  maxLength: 6,
});
const identifier = fc
  .stringMatching(/^[A-Za-z_$][A-Za-z0-9_$]{0,4}$/)
  .filter((s) => !FORBIDDEN.includes(s));
const canonicalIndex = fc.nat(12).map(String);
const segment = fc.oneof(identifier, canonicalIndex);
const placeholder = fc.record({
  index: fc.nat(PARAMS - 1),
  path: fc.array(segment, { maxLength: 3 }),
});
/** Scalars that render, and values that must be refused. */
const usable = fc.oneof(
  fc.string({ minLength: 1, maxLength: 5 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.bigInt(),
  fc.boolean(),
);
const unusable = fc.constantFrom<unknown>(
  undefined,
  null,
  '',
  Number.NaN,
  Infinity,
  -Infinity,
  { id: 1 },
  [1],
  () => 1,
  Symbol('s'),
);

/** Places `value` at `path` inside `root` (creating objects or arrays), if the path allows. */
function place(root: unknown[], index: number, path: string[], value: unknown): void {
  if (path.length === 0) {
    root[index] = value;
    return;
  }
  let target = (root[index] ??= INDEX.test(path[0]) ? [] : {}) as Record<string, unknown>;
  if (typeof target !== 'object' || target === null) return; // an earlier scalar: leave it
  for (let i = 0; i < path.length - 1; i++) {
    const next = (target[path[i]] ??= INDEX.test(path[i + 1]) ? [] : {}) as Record<string, unknown>;
    if (typeof next !== 'object' || next === null) return;
    target = next;
  }
  target[path[path.length - 1]] = value;
}

/** A well-formed template with matching arguments (some values possibly unusable). */
const templateWithArgs = (values: fc.Arbitrary<unknown>) =>
  fc
    .tuple(
      fc.array(fc.tuple(literal, placeholder, values), { minLength: 1, maxLength: 4 }),
      literal,
    )
    .map(([pieces, tail]) => {
      const args: unknown[] = [];
      let template = '';
      for (const [text, { index, path }, value] of pieces) {
        place(args, index, path, value);
        template += `${text}<${[index, ...path].join('.')}>`;
      }
      return { template: template + tail, args };
    })
    .filter(({ template }) => template.length > 0);

describe('key templates: property-based, against the reference rules', () => {
  it('a well-formed template with usable values builds exactly the reference key', () => {
    fc.assert(
      fc.property(templateWithArgs(usable), ({ template, args }) => {
        const expected = referenceOutcome(template, args);
        expect(libraryOutcome(template, args)).toBe(expected);
        // The generator really produced placeholders, and (values permitting) keys.
        expect(referenceParse(template, PARAMS)).not.toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('with some unusable values: LockKeyError at call time exactly when the reference refuses', () => {
    fc.assert(
      fc.property(templateWithArgs(fc.oneof(usable, unusable)), ({ template, args }) => {
        expect(libraryOutcome(template, args)).toBe(referenceOutcome(template, args));
      }),
      { numRuns: 500 },
    );
  });

  it('a template that only has literal text is a static key, refused when its hash tag is not well formed', () => {
    fc.assert(
      fc.property(
        literal.filter((s) => s.length > 0),
        (text) => {
          if (tagWellFormed(text)) expect(compileKeyTemplate(text, 0, where)([])).toBe(text);
          else expect(() => compileKeyTemplate(text, 0, where)).toThrow(LockKeyError);
        },
      ),
    );
  });

  it('malformed templates (stray bracket, bad placeholder, forbidden segment, index too high) always throw LockKeyError', () => {
    const corruption = fc.oneof(
      fc.constantFrom('<', '>', '<<', '>>', '<>', '< >'),
      fc.constantFrom('<x>', '<01>', '<0.>', '<.0>', '<0..a>', '<0.a-b>', '<0.ü>', '< 0>', '<-1>'),
      fc.constantFrom('<0.__proto__>', '<1.constructor>', '<2.a.prototype>'),
      fc.integer({ min: PARAMS, max: 10_000 }).map((n) => `<${n}>`),
    );
    fc.assert(
      fc.property(templateWithArgs(usable), corruption, fc.nat(), ({ template, args }, bad, at) => {
        // Insert the corruption at a boundary outside the existing placeholders.
        const cuts = [0, template.length];
        for (const match of template.matchAll(/<[^<>]*>/g)) {
          cuts.push(match.index, match.index + match[0].length);
        }
        const cut = cuts[at % cuts.length];
        const broken = template.slice(0, cut) + bad + template.slice(cut);
        expect(referenceParse(broken, PARAMS)).toBeNull();
        expect(libraryOutcome(broken, args)).toBe('malformed');
      }),
      { numRuns: 500 },
    );
  });

  it('any string over a bracket-heavy alphabet: compiles exactly when the reference parses it, else LockKeyError', () => {
    const unit = fc.constantFrom('<', '>', '.', '0', '1', '3', '9', 'a', '_', '$', ' ', '{', 'é');
    fc.assert(
      fc.property(
        fc.string({ unit, maxLength: 14 }),
        fc.array(usable, { maxLength: 4 }),
        (template, args) => {
          expect(libraryOutcome(template, args)).toBe(referenceOutcome(template, args));
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
