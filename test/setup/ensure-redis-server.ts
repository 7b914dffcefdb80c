import { execFileSync, spawnSync } from 'node:child_process';

/** What the shared-cache suites run: Debian's package, started by each suite on a free port. */
const COMMAND = 'redis-server';
const INSTALL = 'apt-get install -y redis-server';

function onPath(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Vitest's global setup: makes sure `redis-server` is there before any suite starts, so that
 * `npm test` passes on a fresh Debian machine with Node and nothing else. Missing, it is
 * installed with the system's package manager when this process may (root, apt-get); otherwise
 * the run stops at once with one line saying what to install.
 */
export default function ensureRedisServer(): void {
  if (onPath(COMMAND)) return;
  const root = process.getuid?.() === 0;
  if (!root || !onPath('apt-get')) {
    throw new Error(
      `The shared-cache tests need ${COMMAND} on PATH: install it (Debian/Ubuntu: sudo ${INSTALL}), then run the tests again.`,
    );
  }
  console.log(`${COMMAND} is not installed: ${INSTALL} (Debian's package, for the Redis tests)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', 'redis-server'], { stdio: 'inherit', env });
  if (!onPath(COMMAND)) throw new Error(`${INSTALL} ran, but ${COMMAND} is still not on PATH.`);
}
