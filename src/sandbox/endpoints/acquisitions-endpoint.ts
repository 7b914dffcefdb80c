import type { Acquisition } from '../dataset/records.js';
import { createListEndpoint, type EditableListEndpoint } from '../list-endpoint.js';
import { eventOrdering } from '../ordering.js';
import { amountBound, eventSince, flag, idIn, oneOf } from './common-filters.js';

/** GET /v1/acquisitions (spec 4.3). `companyId` matches the acquirer or the target. */
export function acquisitionsEndpoint(
  records: readonly Acquisition[],
): EditableListEndpoint<Acquisition> {
  return createListEndpoint<Acquisition>({
    path: '/v1/acquisitions',
    records,
    ordering: eventOrdering(),
    filters: {
      since: eventSince(),
      paymentType: oneOf((r) => r.paymentType),
      minAmountUsd: amountBound((r) => r.dealAmountUsdCents, 'min'),
      maxAmountUsd: amountBound((r) => r.dealAmountUsdCents, 'max'),
      isMerger: flag((r) => r.isMerger),
      companyId: idIn((r) => [r.acquirer.id, r.target.id]),
    },
  });
}
