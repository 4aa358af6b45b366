// @ts-check
/**
 * `npm test`: every suite on Redis (the `redis` project), then the behavioural suite (every
 * kind, one server and a local Cluster) again on Valkey (the `valkey` project) when
 * `valkey-server` can be run: VALKEY_SERVER_BIN, else from PATH. Without it the Valkey project is
 * left out with a note, unless REQUIRE_VALKEY=1 (CI), which makes that an error.
 */
const { spawnSync } = require('node:child_process');
const { availableParallelism } = require('node:os');

const valkeyBin = process.env.VALKEY_SERVER_BIN ?? 'valkey-server';
const hasValkey = spawnSync(valkeyBin, ['--version'], { stdio: 'ignore' }).status === 0;
if (!hasValkey && process.env.REQUIRE_VALKEY === '1') {
  throw new Error(`REQUIRE_VALKEY=1 but "${valkeyBin}" cannot be run: install valkey-server.`);
}
if (!hasValkey) {
  process.stderr.write(
    `Note: "${valkeyBin}" not found: the Valkey project is skipped (the Redis suites run).\n`,
  );
}

/** The settings every project shares. */
const common = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    '/@nestjs/terminus-12/.+\\.js$': '<rootDir>/test/support/esm-to-cjs.transform.cjs',
  },
  moduleNameMapper: { '^nestjs-redis-lock$': '<rootDir>/lib/index.ts' },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/terminus-12/)'],
};

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 30_000,
  // At least two workers, also on 2 cores (Jest's default there is one): the suites mostly wait
  // on Redis, timers and child processes, so two halve the run (796 s -> 453 s on 2 cores).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  projects: [
    { ...common, displayName: 'redis', testMatch: ['**/*.spec.ts'] },
    ...(hasValkey
      ? [
          {
            ...common,
            displayName: 'valkey',
            testMatch: [
              '<rootDir>/test/behaviour/**/*.spec.ts',
              '<rootDir>/test/stores/redis/cluster/{cluster-family,failover}.spec.ts',
              '<rootDir>/test/stores/redis/redisson-interop.spec.ts',
            ],
            setupFiles: ['<rootDir>/test/support/on-valkey.ts'],
          },
        ]
      : []),
  ],
};
