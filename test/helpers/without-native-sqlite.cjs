/* global require */
// Loaded with `node --require`: the process loads neither `better-sqlite3` nor `node:sqlite`, as
// on Node 20 where better-sqlite3 could not be installed (no compiler, no prebuilt binary), so
// the alerts open their file with SQLite's WebAssembly build.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS preload, for `--require`
const Module = require('node:module');

const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'better-sqlite3' || request === 'node:sqlite') {
    const error = new Error(
      `Cannot find module '${request}' (test/helpers/without-native-sqlite.cjs)`,
    );
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return load.call(this, request, ...rest);
};
