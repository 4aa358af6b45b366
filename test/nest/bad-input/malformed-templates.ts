/**
 * Key templates that are malformed whatever the method, with what the LockKeyError says: checked
 * by key-template.spec.ts (compileKeyTemplate) and at decoration time by locked.spec.ts.
 */
export const MALFORMED_TEMPLATES: [template: string, message: RegExp][] = [
  ['', /non-empty string/],
  ['order:<0', /the '<' at position 6 is never closed/],
  ['order:0>', /a '>' at position 7 has no opening '<'/],
  ['order:<>', /'<>' is not a placeholder/],
  ['order:<01>', /not a placeholder/],
  ['order:<0.>', /not a placeholder/],
  ['order:< 0>', /not a placeholder/],
  ['order:<-1>', /not a placeholder/],
  ['order:<0.a-b>', /not a placeholder/],
  ['order:<0.__proto__>', /'__proto__', which is not data/],
];
