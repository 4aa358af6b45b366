import { Inject, type InjectionToken } from '@nestjs/common';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants';

/**
 * Declares the injection of `token` into property `key` of the class of `prototype`, once per
 * class (a second `@Locked` method of the class finds it declared). Reads Nest's list of a
 * class's property injections under PROPERTY_DEPS_METADATA, a constant of Nest's internals:
 * this is the only file that uses it, and test/nest/property-dependency.spec.ts fails if
 * @nestjs/common moves or renames it or @nestjs/core stops reading it.
 */
export function injectPropertyOnce(prototype: object, key: symbol, token: InjectionToken): void {
  const declared = (Reflect.getMetadata(PROPERTY_DEPS_METADATA, prototype.constructor) ?? []) as {
    key: unknown;
  }[];
  if (declared.some((dependency) => dependency.key === key)) return;
  Inject(token)(prototype, key);
}
