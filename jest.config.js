/**
 * Three tiers: pure unit tests (no servers), integration tests against real MariaDB/Redis/ZooKeeper,
 * and the fault suite (its own servers and service processes; each test sets its own timeout).
 */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];
// The workspace packages by their names: in this repository, their sources (no build needed).
const moduleNameMapper = {
  '^@shardleaf/client$': '<rootDir>/packages/client/src/index.ts',
  '^@shardleaf/java-hash$': '<rootDir>/packages/java-hash/src/index.ts',
};
module.exports = {
  // Integration suites talk to real servers; no test asserts a timing.
  testTimeout: 120000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      // The client package's own tests (packages/client/test) run with the server's unit tests.
      roots: ['<rootDir>/test/unit', '<rootDir>/packages/client/test'],
      testMatch: ['**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
      moduleNameMapper,
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      // packages/nestjs/test: the Nest module booted in a small app against a real shardleaf.
      roots: ['<rootDir>/test/integration', '<rootDir>/packages/nestjs/test'],
      testMatch: ['**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
      setupFiles: ['reflect-metadata'],
      moduleNameMapper,
    },
    {
      // Fault suite: private Redis/MariaDB/ZooKeeper processes, 3 service processes (dist/), kills.
      displayName: 'chaos',
      testEnvironment: 'node',
      roots: ['<rootDir>/test/chaos'],
      testMatch: ['**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
      setupFiles: ['reflect-metadata'],
      moduleNameMapper,
    },
    {
      // The container image: builds it (scripts/container/build.sh, root + podman), inspects it,
      // and runs it against the real servers when this machine can run containers.
      displayName: 'container',
      testEnvironment: 'node',
      roots: ['<rootDir>/test/container'],
      testMatch: ['**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
      setupFiles: ['reflect-metadata'],
      moduleNameMapper,
    },
  ],
};
