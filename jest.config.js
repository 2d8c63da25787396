/** jest in ESM mode with swc: decorators and metadata on, `./x.js` imports mapped to the `.ts` source. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/core', '<rootDir>/adapters', '<rootDir>/providers', '<rootDir>/http', '<rootDir>/plugins', '<rootDir>/test', '<rootDir>/docs'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  moduleNameMapper: {
    // libphonenumber-js's ESM build imports JSON without an import attribute, which jest warns about on
    // every file that loads it; its CommonJS build is the same code.
    '^libphonenumber-js$': '<rootDir>/node_modules/libphonenumber-js/index.cjs',
    '^callplane/core$': '<rootDir>/core/index.ts',
    '^callplane/plugins/sdk$': '<rootDir>/plugins/sdk.ts',
    '^callplane/testing$': '<rootDir>/test/testing.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['@swc/jest', {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        target: 'es2022',
      },
      module: { type: 'es6' },
    }],
  },
  // integer typed arrays compared by their bytes (jest's element walk took ~0.5 s per 100 KB buffer)
  setupFilesAfterEnv: ['<rootDir>/test/support/jest-byte-equality.ts'],
  testTimeout: 30000,
  reporters: ['default', '<rootDir>/test/support/skip-reporter.cjs'],
};
