import fc from 'fast-check';
import { LockError, LockKeyError } from '../../lib';
import { checkBuiltKey, compileKeyTemplate } from '../../lib/nest/decorators/key-template';
import { hashTagProblem } from '../../lib/core/options/validate';
import { MALFORMED_TEMPLATES } from './bad-input/malformed-templates';

const where = '@Locked on Svc.m';
const build = (template: string, args: unknown[], params = 3) =>
  compileKeyTemplate(template, params, where)(args);

describe('key templates (pure)', () => {
  it.each([
    ['order:pay:<0>', [42], 'order:pay:42'],
    ['order:<0.id>:<1>', [{ id: 'a7' }, 'ship'], 'order:a7:ship'],
    ['<0.items.1.sku>', [{ items: [{ sku: 'x' }, { sku: 'y' }] }], 'y'],
    ['static', [], 'static'],
    ['<0><1>', ['a', 'b'], 'ab'],
    ['big:<0>', [12345678901234567890n], 'big:12345678901234567890'],
    ['flag:<0>', [false], 'flag:false'],
    ['{tag}:<0>', ['ü-ñ-漢字'], '{tag}:ü-ñ-漢字'],
    ['neg:<0>', [-1.5], 'neg:-1.5'],
  ])('%s renders %j as %s', (template, args, key) => {
    expect(build(template, args)).toBe(key);
  });

  it.each([
    ...MALFORMED_TEMPLATES,
    ['order:<x>', /not a placeholder/],
    ['order:<0..a>', /not a placeholder/],
    ['order:<0.constructor.name>', /'constructor', which is not data/],
    ['order:<3>', /refers to argument 3, but the method declares 3 parameters/],
  ])('rejects template %j at decoration time', (template, message) => {
    const compile = () => compileKeyTemplate(template, 3, where);
    expect(compile).toThrow(LockKeyError);
    expect(compile).toThrow(message);
    expect(compile).toThrow(/@Locked on Svc\.m/);
  });

  it('rejects a template that is not a string', () => {
    expect(() => compileKeyTemplate(42, 1, where)).toThrow(/got 42/);
  });

  it.each([
    ['<0>', [undefined], /argument 0 is undefined/],
    ['<0>', [null], /argument 0 is null/],
    ['<0>', [''], /argument 0 is an empty string/],
    ['<0>', [Number.NaN], /argument 0 is NaN/],
    ['<0>', [Infinity], /argument 0 is Infinity/],
    ['<0>', [{ id: 1 }], /argument 0 is an object; name the property to use, e.g. <0.id>/],
    ['<0>', [[1, 2]], /argument 0 is an array/],
    ['<0>', [() => 1], /a function, not a string or number/],
    ['<0>', [Symbol('s')], /not a string or number/],
    ['<0.id>', [undefined], /argument 0 is undefined, so it has no property 'id'/],
    ['<0.id>', ['text'], /argument 0 is "text", so it has no property 'id'/],
    ['<0.a.b>', [{ a: null }], /argument 0.a is null, so it has no property 'b'/],
    ['<0.id>', [{}], /argument 0.id is undefined/],
    ['<1>', ['only one'], /argument 1 is undefined/],
  ])('rejects %s with %p at call time', (template, args, message) => {
    const key = () => build(template, args);
    expect(key).toThrow(LockKeyError);
    expect(key).toThrow(message);
    expect(key).toThrow(/The method was not run/);
  });

  it('checks what a key function returned', () => {
    expect(checkBuiltKey('k', where)).toBe('k');
    for (const bad of ['', undefined, 42, null]) {
      expect(() => checkBuiltKey(bad, where)).toThrow(LockKeyError);
    }
    expect(new LockKeyError('x')).toBeInstanceOf(LockError);
  });

  describe('property: rendering follows the documented rules', () => {
    const literal = fc.stringMatching(/^[^<>]{0,8}$/);
    const ident = fc
      .stringMatching(/^[A-Za-z_$][\w$]{0,5}$/)
      .filter((s) => !['__proto__', 'prototype', 'constructor'].includes(s));
    const scalar = fc.oneof(
      fc.string({ minLength: 1, maxLength: 6 }),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
    );

    it('a template of literals and <N> / <N.path> placeholders renders each value with String()', () => {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(literal, fc.nat(3), fc.array(ident, { maxLength: 3 }), scalar), {
            minLength: 1,
            maxLength: 4,
          }),
          literal,
          (parts, tail) => {
            const args: Record<string, unknown>[] = [{}, {}, {}, {}];
            let template = '';
            let expected = '';
            const used = new Set<string>();
            for (const [text, index, path, value] of parts) {
              // Each placeholder gets its own root property so values cannot collide.
              const root = `p${used.size}`;
              used.add(root);
              let target: Record<string, unknown> = args[index];
              for (const segment of [root, ...path.slice(0, -1)]) {
                target = (target[segment] ??= {}) as Record<string, unknown>;
              }
              const last = path.length > 0 ? path[path.length - 1] : undefined;
              if (last === undefined) {
                args[index][root] = value;
              } else {
                target[last] = value;
              }
              template += `${text}<${[index, root, ...path].join('.')}>`;
              expected += `${text}${String(value)}`;
            }
            template += tail;
            expected += tail;
            const rendered = compileKeyTemplate(template, 4, where)(args);
            const emptyString = parts.some(([, , , value]) => value === '');
            if (emptyString) return; // covered by the rejection cases
            expect(rendered).toBe(expected);
          },
        ),
      );
    });

    it('any template with an unbalanced angle bracket is rejected', () => {
      fc.assert(
        fc.property(literal, literal, fc.constantFrom('<', '>'), (before, after, bracket) => {
          expect(() => compileKeyTemplate(`${before}${bracket}${after}`, 4, where)).toThrow(
            LockKeyError,
          );
        }),
      );
    });

    it('any template without angle brackets is a static key (refused now if its hash tag is not well formed)', () => {
      fc.assert(
        fc.property(
          literal.filter((s) => s.length > 0),
          (text) => {
            if (hashTagProblem(text) === undefined) {
              expect(compileKeyTemplate(text, 0, where)([])).toBe(text);
            } else expect(() => compileKeyTemplate(text, 0, where)).toThrow(LockKeyError);
          },
        ),
      );
    });
  });
});
