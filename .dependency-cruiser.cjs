/**
 * The layer rules of DESIGN.md, checked on every `npm test`:
 * core imports only core; providers import core and plugins/sdk only (plus node built-ins and their own
 * vendor SDK in <id>.client.ts); only <id>.client.ts imports a vendor SDK; http never imports adapters;
 * only the composition root (plugins/) imports inversify.
 */
const VENDOR_SDKS = '^node_modules/(twilio|ari-client|@vonage|plivo|telnyx)(/|$)';
module.exports = {
  forbidden: [
    {
      name: 'core-is-pure',
      comment: 'core/ imports only core/ (no npm package, no other layer)',
      severity: 'error',
      from: { path: '^core/', pathNot: '\\.test\\.ts$' },
      to: { pathNot: ['^core/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'core-no-node-builtins',
      comment: 'core/ stays framework- and platform-free: no node: built-ins',
      severity: 'error',
      from: { path: '^core/', pathNot: '\\.test\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'providers-use-core-and-sdk-only',
      comment: 'providers import core/, plugins/sdk and their own folder',
      severity: 'error',
      from: { path: '^providers/([^/]+)/', pathNot: '\\.test\\.ts$' },
      to: {
        pathNot: ['^core/', '^plugins/sdk\\.ts$', '^providers/$1/', '^node_modules/'],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'vendor-sdk-only-in-client',
      comment: 'only <id>.client.ts imports a vendor SDK',
      severity: 'error',
      from: { pathNot: ['\\.client\\.ts$', '^test/', '\\.test\\.ts$'] },
      to: { path: VENDOR_SDKS },
    },
    {
      name: 'http-not-adapters',
      comment: 'http/ talks to core through use cases; adapters are wired by the composition root',
      severity: 'error',
      from: { path: '^http/', pathNot: ['\\.test\\.ts$', '^http/main\\.ts$', '^http/cli\\.ts$'] },
      to: { path: '^adapters/' },
    },
    {
      name: 'inversify-only-in-composition-root',
      comment: 'only plugins/composition-root.ts and plugins/modules/ import inversify',
      severity: 'error',
      from: { pathNot: ['^plugins/composition-root\\.ts$', '^plugins/modules/', '^test/', '\\.test\\.ts$'] },
      to: { path: '^node_modules/(inversify|@inversifyjs)/' },
    },
    {
      name: 'undici-only-in-plugins',
      comment: 'the outbound HTTP client (undici) is the network adapter of plugins/ (network-policy.ts, ai-fetch.ts)',
      severity: 'error',
      from: { pathNot: ['^plugins/', '^test/', '\\.test\\.ts$'] },
      to: { path: '(^|/)node_modules/undici/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^dist/|^data/|\\.d\\.ts$)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.json'] },
  },
};
