// ESLint (flat config): the recommended rules over the project's JavaScript, with the
// globals of where each part runs. `npm run lint` runs it with Prettier and clang-format.
import js from '@eslint/js';
import globals from 'globals';

export default [
  {
    ignores: ['node_modules/', '**/node_modules/', 'dist/', 'build/', 'docs/api/', 'tests/out/', 'bench/.cache/', 'examples/*/node_modules/',
      'tests/fuzz/corpus/', '**/*.min.js'],
  },
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'module',
      globals: { ...globals.node, ...globals.browser, ...globals.worker },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_$', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      'no-constant-condition': ['error', { checkLoops: false }],
      'prefer-const': ['error', { destructuring: 'all' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
    },
  },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs' } },
  // the demo's entry point stays ES5 so that an old browser reaches its message (web/main.js)
  { files: ['web/main.js'], rules: { 'no-var': 'off', 'prefer-const': 'off' } },
];
