/** The flags between `node` and `dist/main.js` in package.json's `start` script. */
export function startNodeFlags(): string[];
