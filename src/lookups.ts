import { buildFilterQuery } from './upstream/build-query.js';
import type { EndpointFilters, EndpointName, EndpointRecords } from './upstream/endpoints.js';
import type {
  AcquisitionRecord,
  CompanyRecord,
  ExecMoveRecord,
  FundingEventRecord,
  InvestorRecord,
  PersonRecord,
} from './upstream/types.js';
import type { ListEnvelope } from './upstream/types.js';
import type { UpstreamSession } from './upstream/upstream-session.js';
import type { LocalId } from './global-id.js';

/**
 * How each node type is found again by id. The service has no fetch-by-id endpoint, so each
 * lookup narrows a list with the filters its id's hints allow and pages until the record shows.
 * Page sizes grow (1, then a few, then more) so the usual case costs one request and one credit.
 */

const PAGE_LIMITS = [1, 5, 20] as const;
const INVESTOR_PAGE_LIMITS = [1, 2, 4, 8, 16, 32, 64] as const;

async function findInList<E extends EndpointName, T>(
  session: UpstreamSession,
  endpoint: E,
  filters: EndpointFilters<E>,
  pick: (record: EndpointRecords[E]) => T | null | undefined,
  limits: readonly number[] = PAGE_LIMITS,
): Promise<T | null> {
  const filterQuery = buildFilterQuery(endpoint, filters);
  let cursor: string | null = null;
  for (const limit of limits) {
    const page: ListEnvelope<EndpointRecords[E]> = await session.page(endpoint, filterQuery, {
      cursor,
      limit,
    });
    const { data, pagination } = page;
    for (const record of data) {
      const found = pick(record);
      if (found) return found;
    }
    if (!pagination.hasMore || !pagination.nextCursor) return null;
    cursor = pagination.nextCursor;
  }
  return null;
}

/** The open interval (t - 1 ms, ...) that contains `t`, for the strict `since` bound. */
function justBefore(timestamp: string | undefined) {
  const time = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(time) ? undefined : new Date(time - 1).toISOString();
}

function justAfter(timestamp: string | undefined) {
  const time = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(time) ? undefined : new Date(time + 1).toISOString();
}

function byId<T extends { id: string }>(uuid: string) {
  return (record: T | null | undefined) => (record?.id === uuid ? record : null);
}

/**
 * A company by its domain (one credit), or, with no domain hint, as embedded in its newest
 * funding event, executive move or acquisition (one credit per endpoint tried, at most three).
 */
export async function findCompany(session: UpstreamSession, { uuid, hints }: LocalId) {
  const [domain] = hints;
  const match = byId<CompanyRecord>(uuid);
  if (domain) return findInList(session, 'companies', { domain }, match);
  return (
    (await findInList(
      session,
      'fundingEvents',
      { companyId: uuid },
      (e) => match(e.company),
      [1],
    )) ??
    (await findInList(
      session,
      'execMoves',
      { companyId: uuid },
      (m) => match(m.company) ?? match(m.fromCompany),
      [1],
    )) ??
    (await findInList(
      session,
      'acquisitions',
      { companyId: uuid },
      (a) => match(a.acquirer) ?? match(a.target),
      [1],
    ))
  );
}

/** A company by its exact domain (one credit). */
export async function findCompanyByDomain(session: UpstreamSession, domain: string) {
  return findInList(session, 'companies', { domain }, (c) => (c.domain === domain ? c : null));
}

/** An investor by its exact domain (one credit). */
export async function findInvestorByDomain(session: UpstreamSession, domain: string) {
  return findInList(session, 'investors', { domain }, (i) => (i.domain === domain ? i : null));
}

/**
 * An investor by a search for its name (its id's hint). Costs one credit per investor the search
 * returns up to and including this one: one when the name is distinctive, more when other
 * investors share its words (the search also matches domains). Pages double from 1, so the
 * records paid for stay within twice the position of the one sought; gives up after 127.
 */
export async function findInvestor(session: UpstreamSession, { uuid, hints }: LocalId) {
  const [name] = hints;
  if (!name) return null;
  return findInList(
    session,
    'investors',
    { search: name },
    byId<InvestorRecord>(uuid),
    INVESTOR_PAGE_LIMITS,
  );
}

/** A person, as embedded in one of their executive moves (one credit). */
export async function findPerson(session: UpstreamSession, { uuid }: LocalId) {
  return findInList<'execMoves', PersonRecord>(session, 'execMoves', { personId: uuid }, (m) =>
    byId<PersonRecord>(uuid)(m.person),
  );
}

/** An executive move among its person's moves discovered or announced around its discovery. */
export async function findExecMove(session: UpstreamSession, { uuid, hints }: LocalId) {
  const [personId, discoveredAt] = hints;
  if (!personId) return null;
  return findInList(
    session,
    'execMoves',
    { personId, since: justBefore(discoveredAt), until: justAfter(discoveredAt) },
    byId<ExecMoveRecord>(uuid),
  );
}

/** A funding event among its company's events of the same round since its discovery. */
export async function findFundingEvent(session: UpstreamSession, { uuid, hints }: LocalId) {
  const [companyId, discoveredAt, round] = hints;
  if (!companyId) return null;
  return findInList(
    session,
    'fundingEvents',
    { companyId, since: justBefore(discoveredAt), round: round ? [round] : undefined },
    byId<FundingEventRecord>(uuid),
  );
}

/** An acquisition among its acquirer's (or target's) deals since its discovery. */
export async function findAcquisition(session: UpstreamSession, { uuid, hints }: LocalId) {
  const [companyId, discoveredAt] = hints;
  if (!companyId) return null;
  return findInList(
    session,
    'acquisitions',
    { companyId, since: justBefore(discoveredAt) },
    byId<AcquisitionRecord>(uuid),
  );
}
