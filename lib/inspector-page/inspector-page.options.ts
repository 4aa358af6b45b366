import type { CanActivate, Type } from '@nestjs/common';
import { assertKnownOptions, describe } from '../core';
import { LockOptionsError } from '../errors';

/** Options of `RedisLockInspectorModule.register()`. */
export interface RedisLockInspectorOptions {
  /** Where the page is served; its JSON API is under `${path}/api`. Default `/locks`. */
  path?: string;
  /**
   * A guard (a CanActivate class, resolved in the module like any guard, or an instance) on every
   * route: the page and its API. Without one, anybody who reaches the server reads the locks.
   */
  guard?: Type<CanActivate> | CanActivate;
  /** Whether the page may force unlock (a button per row, POST/DELETE `api/locks/:key`). */
  allowUnlock?: boolean;
}

/** The options with their defaults. */
export interface ResolvedInspectorPageOptions {
  readonly path: string;
  readonly guard: Type<CanActivate> | CanActivate | undefined;
  readonly allowUnlock: boolean;
}

const KNOWN = ['path', 'guard', 'allowUnlock'] as const;

/** A path of URL-safe characters (no route parameters or wildcards), `/` separated. */
const PATH = /^\/?(?:[A-Za-z0-9._~-]+\/?)*$/;

/** Checks the options (LockOptionsError naming the option) and fills in the defaults. */
export function resolveInspectorPageOptions(options: unknown = {}): ResolvedInspectorPageOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new LockOptionsError(
      'options',
      `RedisLockInspectorModule.register() takes an options object, got ${describe(options)}.`,
    );
  }
  assertKnownOptions(options, KNOWN);
  const { path = '/locks', guard, allowUnlock = false } = options as RedisLockInspectorOptions;
  if (typeof path !== 'string' || !PATH.test(path)) {
    throw new LockOptionsError(
      'path',
      `expected a URL path such as '/locks' (letters, digits, '.', '_', '~', '-' between '/'), got ${describe(path)}.`,
    );
  }
  if (
    guard !== undefined &&
    typeof guard !== 'function' &&
    typeof (guard as Partial<CanActivate> | null)?.canActivate !== 'function'
  ) {
    throw new LockOptionsError(
      'guard',
      `expected a guard class (CanActivate) or an instance of one, got ${describe(guard)}.`,
    );
  }
  if (typeof allowUnlock !== 'boolean') {
    throw new LockOptionsError(
      'allowUnlock',
      `expected true or false, got ${describe(allowUnlock)}.`,
    );
  }
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return { path: `/${trimmed}`, guard, allowUnlock };
}
