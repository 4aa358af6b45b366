import { TerminusModule } from '@nestjs/terminus';
import { healthIndicatorTests } from './health-kit';

// Terminus 12 (the dev dependency @nestjs/terminus-12) for the library and this suite alike.
jest.mock('@nestjs/terminus', () => jest.requireActual<object>('@nestjs/terminus-12'));

describe('RedisLockHealthIndicator on @nestjs/terminus 12', () => {
  it('runs on Terminus 12 (the dev dependency @nestjs/terminus-12)', () => {
    const terminus12 = jest.requireActual<{ TerminusModule: unknown }>('@nestjs/terminus-12');
    const { version } = jest.requireActual<{ version: string }>('@nestjs/terminus-12/package.json');
    expect(version).toMatch(/^12\./);
    expect(TerminusModule).toBe(terminus12.TerminusModule);
  });

  healthIndicatorTests();
});
