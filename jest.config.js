/** Two tiers: pure unit tests (no servers) and integration tests against real MariaDB/Redis/ZooKeeper. */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', isolatedModules: true }];
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      roots: ['<rootDir>/test/unit'],
      testMatch: ['**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      roots: ['<rootDir>/test/integration'],
      testMatch: ['**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
      testTimeout: 120000,
      setupFiles: ['reflect-metadata'],
    },
  ],
};
