import type { ExecMove } from '../dataset/records.js';
import { createListEndpoint, type EditableListEndpoint } from '../list-endpoint.js';
import { eventOrdering } from '../ordering.js';
import { eventSince, eventUntil, idIn, oneOf } from './common-filters.js';

/** GET /v1/exec-moves (spec 4.2). */
export function execMovesEndpoint(records: readonly ExecMove[]): EditableListEndpoint<ExecMove> {
  return createListEndpoint<ExecMove>({
    path: '/v1/exec-moves',
    records,
    ordering: eventOrdering(),
    filters: {
      since: eventSince(),
      until: eventUntil(),
      companyId: idIn((r) => [r.company.id]),
      personId: idIn((r) => [r.person.id]),
      roleSeniority: oneOf((r) => r.roleSeniority),
      moveType: oneOf((r) => r.moveType),
    },
  });
}
