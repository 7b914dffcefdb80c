// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'coverage/**', 'dist/**', '.bench-tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // Plugins are leaves: the composition root (src/app.ts) alone imports them, and a plugin
    // imports none, so that each rule lives in a module every door calls, not in a plugin.
    files: ['src/**/*.ts'],
    ignores: ['src/app.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/plugins/*', './use-*'],
              message:
                'Plugins are leaves: only src/app.ts imports them. Import the module the plugin adapts (admission/, credits/, ...) instead.',
            },
          ],
        },
      ],
    },
  },
  {
    // An object literal's getter is defined anew on each object, and V8's young-generation
    // collector then keeps what the getter's scope holds (a connection's records) until the next
    // full collection: a class's getter, on its prototype, does not (BENCHMARKS.md, issue 39).
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "ObjectExpression > Property[kind='get']",
          message:
            'No getters in object literals: V8 keeps their scope past a young collection. Use a class with the getter on its prototype.',
        },
      ],
    },
  },
  {
    // Tests read untyped JSON responses; typing every one would only restate the schema.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
