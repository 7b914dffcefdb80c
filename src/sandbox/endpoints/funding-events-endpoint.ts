import type { FundingEvent } from '../dataset/records.js';
import { createListEndpoint, type EditableListEndpoint } from '../list-endpoint.js';
import { eventOrdering } from '../ordering.js';
import { amountBound, countryCode, eventSince, exact, idIn, oneOf } from './common-filters.js';

/** GET /v1/funding-events (spec 4.4). */
export function fundingEventsEndpoint(
  records: readonly FundingEvent[],
): EditableListEndpoint<FundingEvent> {
  return createListEndpoint<FundingEvent>({
    path: '/v1/funding-events',
    records,
    ordering: eventOrdering(),
    filters: {
      since: eventSince(),
      round: oneOf((r) => r.round),
      minAmountUsd: amountBound((r) => r.amountUsdCents, 'min'),
      maxAmountUsd: amountBound((r) => r.amountUsdCents, 'max'),
      country: countryCode((r) => r.company.hqCountry),
      industryGroup: exact((r) => r.company.industryGroup),
      companyId: idIn((r) => [r.company.id]),
    },
  });
}
