import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Addresses a webhook may never reach unless the setting allows them: this host, the private
 * networks, link-local (the cloud metadata services, 169.254.169.254, among them), shared and
 * reserved ranges, multicast; IPv6's loopback, unique-local, link-local and multicast, and the
 * IPv4 ones embedded in IPv6 (mapped, NAT64).
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 one carries (`::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`), if any. */
function embeddedIpv4(address: string): string | null {
  const match =
    /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(
      address,
    );
  if (!match) return null;
  if (match[1]) return match[1];
  const high = parseInt(match[2]!, 16);
  const low = parseInt(match[3]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** True for an address a webhook may not reach (see {@link PRIVATE}). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  if (v4) return PRIVATE.check(v4, 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

/** A webhook target refused: the message says why (never a secret; the URL's host only). */
export class TargetRefused extends Error {
  override readonly name = 'TargetRefused';
}

/**
 * A `lookup` for the connections to webhooks: resolves the host, refuses it when any of its
 * addresses is one a webhook may not reach (unless `allowPrivate`), and hands the socket the
 * address it checked, so that what is connected to is what was checked (no second resolution a
 * rebinding name could answer otherwise).
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as { address: string; family: number }[];
      const refused = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (refused || list.length === 0) {
        const reason = new TargetRefused(
          `The webhook's host ${hostname} resolves to ${refused?.address ?? 'no address'}: a loopback, private, link-local or reserved address, which alerts may not reach.`,
        );
        return callback(reason as NodeJS.ErrnoException, '', 0);
      }
      const first = list[0]!;
      if ((options as { all?: boolean }).all) {
        (callback as unknown as (e: null, all: typeof list) => void)(null, list);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}

/** The longest webhook URL an alert may have. */
export const MAX_URL_LENGTH = 2_048;

/**
 * Checks a webhook's URL when an alert is made: `https` (`http` too when `allowPrivate`, for
 * local receivers), no credentials in it, and a host whose every address may be reached. Throws
 * a {@link TargetRefused} saying which rule it breaks.
 */
export async function checkTarget(url: string, allowPrivate: boolean): Promise<URL> {
  if (url.length > MAX_URL_LENGTH) {
    throw new TargetRefused(`The webhook URL must be at most ${MAX_URL_LENGTH} characters.`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TargetRefused('The webhook URL is not a URL: give an absolute https:// URL.');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) {
    throw new TargetRefused(
      `The webhook URL must use ${schemes.join(' or ')} (got ${parsed.protocol.slice(0, -1)}).`,
    );
  }
  if (parsed.username || parsed.password) {
    throw new TargetRefused(
      'The webhook URL must not carry a user or password: receivers verify the signature instead.',
    );
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  await new Promise<void>((resolve, reject) => {
    guardedLookup(allowPrivate)(host, { all: true }, (error) =>
      error ? reject(error instanceof TargetRefused ? error : refusedHost(host)) : resolve(),
    );
  });
  return parsed;
}

function refusedHost(host: string): TargetRefused {
  return new TargetRefused(`The webhook's host ${host} does not resolve.`);
}
