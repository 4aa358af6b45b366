import 'reflect-metadata';
import { Inject, Injectable } from '@nestjs/common';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants';
import { Test } from '@nestjs/testing';
import { injectPropertyOnce } from '../../lib/nest/decorators/property-dependency';

// `@Locked` declares LockService as a property dependency through Nest's internal
// PROPERTY_DEPS_METADATA (lib/nest/decorators/property-dependency.ts). These checks fail when
// @nestjs/common moves or renames the constant, when its Inject() stops writing under it, or when
// @nestjs/core's injector stops reading it.

const TOKEN = 'property-dependency:token';
const KEY = Symbol('injected');

describe('PROPERTY_DEPS_METADATA (Nest internals @Locked relies on)', () => {
  it('is exported by @nestjs/common/constants', () => {
    expect(typeof PROPERTY_DEPS_METADATA).toBe('string');
  });

  it("is where @nestjs/common's Inject() lists a class's property injections", () => {
    class Target {}
    Inject(TOKEN)(Target.prototype, 'dependency');
    expect(Reflect.getMetadata(PROPERTY_DEPS_METADATA, Target)).toEqual([
      { key: 'dependency', type: TOKEN },
    ]);
  });

  it("declares once per class, and @nestjs/core's injector fills the property", async () => {
    @Injectable()
    class Target {}
    injectPropertyOnce(Target.prototype, KEY, TOKEN);
    injectPropertyOnce(Target.prototype, KEY, TOKEN);
    expect(Reflect.getMetadata(PROPERTY_DEPS_METADATA, Target)).toHaveLength(1);
    const moduleRef = await Test.createTestingModule({
      providers: [Target, { provide: TOKEN, useValue: 'injected value' }],
    }).compile();
    expect(moduleRef.get<Target, Record<symbol, unknown>>(Target)[KEY]).toBe('injected value');
    await moduleRef.close();
  });
});
