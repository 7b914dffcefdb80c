import type { Investor } from '../dataset/records.js';
import { createListEndpoint, type ListEndpoint } from '../list-endpoint.js';
import { directoryOrdering } from '../ordering.js';
import { countryCode, directorySince, exact, keywordSearch, oneOf } from './common-filters.js';

const lower = (s: string): string => s.toLowerCase();

/** GET /v1/investors (spec 4.6). `type` takes repeated keys and comma-separated values. */
export function investorsEndpoint(records: readonly Investor[]): ListEndpoint {
  return createListEndpoint<Investor>({
    path: '/v1/investors',
    records,
    ordering: directoryOrdering(),
    filters: {
      since: directorySince(),
      search: keywordSearch((r) => [r.name, r.domain]),
      type: oneOf((r) => r.type, true),
      country: countryCode((r) => r.hqCountry),
      domain: exact((r) => r.domain, lower),
    },
  });
}
