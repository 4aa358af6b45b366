import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { LockService } from './lock.service';
import { HAS_LOCKED_METHODS, LOCK_SERVICE_REF } from './redis-lock.constants';

/**
 * Gives every provider and controller instance with `@Locked` methods the LockService of its
 * application (through Nest's DiscoveryService, so two apps in one process stay apart).
 */
@Injectable()
export class LockedInstancesBinder implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly locks: LockService,
  ) {}

  onModuleInit(): void {
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null || !wrapper.isDependencyTreeStatic()) {
        continue;
      }
      if ((instance as Record<symbol, unknown>)[HAS_LOCKED_METHODS] !== true) continue;
      Object.defineProperty(instance, LOCK_SERVICE_REF, {
        value: this.locks,
        configurable: true,
        enumerable: false,
      });
    }
  }
}
