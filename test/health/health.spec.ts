import { healthIndicatorTests } from './health-kit';

describe('RedisLockHealthIndicator on @nestjs/terminus 11', () => {
  it('runs on Terminus 11 (the dev dependency)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { version } = require('@nestjs/terminus/package.json') as { version: string };
    expect(version).toMatch(/^11\./);
  });

  healthIndicatorTests();

  it('is a separate entry: the library loads without @nestjs/terminus', () => {
    jest.isolateModules(() => {
      jest.doMock('@nestjs/terminus', () => {
        throw new Error("Cannot find module '@nestjs/terminus'");
      });
      // require(): loaded here, inside the isolated registry with terminus missing.
      /* eslint-disable @typescript-eslint/no-require-imports */
      expect(() => require('../../lib') as unknown).not.toThrow();
      expect(() => require('../../lib/health') as unknown).toThrow(/@nestjs\/terminus/);
      /* eslint-enable @typescript-eslint/no-require-imports */
    });
  });
});
