import type { Company } from '../dataset/records.js';
import { createListEndpoint, type ListEndpoint } from '../list-endpoint.js';
import { directoryOrdering } from '../ordering.js';
import {
  countryCode,
  directorySince,
  exact,
  integerBound,
  keywordSearch,
} from './common-filters.js';

const lower = (s: string): string => s.toLowerCase();

/** GET /v1/companies (spec 4.5). */
export function companiesEndpoint(records: readonly Company[]): ListEndpoint {
  return createListEndpoint<Company>({
    path: '/v1/companies',
    records,
    ordering: directoryOrdering(),
    filters: {
      since: directorySince(),
      search: keywordSearch((r) => [r.name, r.domain, r.description]),
      domain: exact((r) => r.domain, lower),
      country: countryCode((r) => r.hqCountry),
      industryGroup: exact((r) => r.industryGroup),
      employeeCountBucket: exact((r) => r.employeeCountBucket),
      foundedYearMin: integerBound((r) => r.foundedYear, 'min'),
      foundedYearMax: integerBound((r) => r.foundedYear, 'max'),
    },
  });
}
