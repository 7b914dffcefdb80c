import type { EndpointName } from '../endpoints.js';
import type { UpstreamRecord } from '../types.js';
import type { UpstreamPolicy } from '../upstream-call.js';

/** Told of every page an operation receives, e.g. to remember the records it carries. */
export type PageListener = (
  endpoint: EndpointName,
  data: readonly (UpstreamRecord | null)[],
) => void;

/** Tells `listener` of each page the call returns (the operation's record store). */
export function onPage(listener: PageListener): UpstreamPolicy {
  return (next) => (request) =>
    next(request).then((page) => {
      listener(request.endpoint, page.envelope.data);
      return page;
    });
}
