/**
 * The length of the body each success envelope was parsed from (characters, about its bytes),
 * set by the transport: what a cached page weighs, without serialising it again.
 */
export const bodySize = new WeakMap<object, number>();
