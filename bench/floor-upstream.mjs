/* global process, URL, Buffer */
/**
 * What both floors of `npm run bench` do upstream (bench/floor-server.mjs, bench/yoga-floor-server.mjs):
 * one undici GET of the service's page, `JSON.parse`, each record's fields copied under the
 * gateway's names (ids base64, not signed). No cursors, no errors mapped, no credits kept.
 * The Yoga floor also walks (bench/scenarios.ts's WALK_QUERY): one GET of a company's moves each.
 */
import { Pool } from 'undici';

const upstream = new URL(process.env.UPSTREAM_URL ?? 'http://127.0.0.1:4000');
const pool = new Pool(upstream.origin, { connections: 64, keepAliveTimeout: 30_000 });
const globalId = (type, id) => Buffer.from(`${type}:${id}`).toString('base64');

const company = (c) =>
  c && {
    uuid: c.id,
    id: globalId('Company', c.id),
    name: c.name,
    domain: c.domain,
    description: c.description,
    linkedinHandle: c.linkedinHandle,
    linkedinUrl: c.linkedinUrl,
    linkedinGeoId: c.linkedinGeoId,
    linkedinIndustryId: c.linkedinIndustryId,
    hqCity: c.hqCity,
    hqCountry: c.hqCountry && { code: c.hqCountry.code, name: c.hqCountry.name },
    industryGroup: c.industryGroup,
    industrySubTags: c.industrySubTags,
    employeeCountBucket: c.employeeCountBucket,
    foundedYear: c.foundedYear,
    businessModel: c.businessModel,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };

const fundingEvent = (e) => ({
  uuid: e.id,
  id: globalId('FundingEvent', e.id),
  round: e.round,
  amountUsdCents: e.amountUsdCents,
  amountUsd: e.amountUsd,
  amountOriginalCurrency: e.amountOriginalCurrency,
  amountOriginalCents: e.amountOriginalCents,
  announcedAt: e.announcedAt,
  discoveredAt: e.discoveredAt,
  sources: e.sources && e.sources.map((s) => ({ url: s.url, extractedAt: s.extractedAt })),
  investors:
    e.investors &&
    e.investors.map((i) => ({ id: globalId('Investor', i.id), uuid: i.id, name: i.name })),
  company: company(e.company),
});

/** The fields of an executive move the walk reads, and its person's. */
const execMove = (m) => ({
  uuid: m.id,
  id: globalId('ExecMove', m.id),
  role: m.role,
  moveType: m.moveType,
  person: m.person && {
    uuid: m.person.id,
    id: globalId('Person', m.person.id),
    name: m.person.name,
  },
});

/** The two lists the floors know: bench/scenarios.ts's LIST_QUERY and WIDE_QUERY. */
export const LISTS = {
  fundingEvents: { path: '/v1/funding-events?limit=20', map: fundingEvent },
  companies: { path: '/v1/companies?limit=100', map: company },
};

/** One GET of `path` with `apiKey`: the page's body parsed. Throws on any status but 200. */
async function get(path, apiKey) {
  const response = await pool.request({
    origin: upstream.origin,
    path,
    method: 'GET',
    headers: { 'x-api-key': apiKey, accept: 'application/json' },
  });
  const page = JSON.parse(await response.body.text());
  if (response.statusCode !== 200) throw new Error(`upstream ${response.statusCode}`);
  return page;
}

/**
 * One page of `list` (a key of {@link LISTS}) with `apiKey`: its records mapped, and the
 * credits the service charged. Throws on any status but 200.
 */
export async function fetchList(list, apiKey) {
  const { path, map } = LISTS[list];
  const page = await get(path, apiKey);
  return { nodes: page.data.map(map), creditsUsed: page.meta.creditsUsed };
}

/**
 * The `first` latest executive moves of the company `companyUuid`, as the gateway asks for them
 * in the walk (the same query string, parameters in the same order, so the service does the same
 * work): the moves mapped, and the credits charged. Throws on any status but 200.
 */
export async function fetchExecMoves(companyUuid, first, apiKey) {
  const path = `/v1/exec-moves?companyId=${encodeURIComponent(companyUuid)}&limit=${first}`;
  const page = await get(path, apiKey);
  return { nodes: page.data.map(execMove), creditsUsed: page.meta.creditsUsed };
}
