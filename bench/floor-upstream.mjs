/* global process, URL, Buffer */
/**
 * What both floors of `npm run bench` do upstream (bench/floor-server.mjs, bench/yoga-floor-server.mjs):
 * one undici GET of the service's page, `JSON.parse`, each record's fields copied under the
 * gateway's names (ids base64, not signed). No cursors, no errors mapped, no credits kept.
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

/** The two lists the floors know: bench/scenarios.ts's LIST_QUERY and WIDE_QUERY. */
export const LISTS = {
  fundingEvents: { path: '/v1/funding-events?limit=20', map: fundingEvent },
  companies: { path: '/v1/companies?limit=100', map: company },
};

/**
 * One page of `list` (a key of {@link LISTS}) with `apiKey`: its records mapped, and the
 * credits the service charged. Throws on any status but 200.
 */
export async function fetchList(list, apiKey) {
  const { path, map } = LISTS[list];
  const response = await pool.request({
    origin: upstream.origin,
    path,
    method: 'GET',
    headers: { 'x-api-key': apiKey, accept: 'application/json' },
  });
  const page = JSON.parse(await response.body.text());
  if (response.statusCode !== 200) throw new Error(`upstream ${response.statusCode}`);
  return { nodes: page.data.map(map), creditsUsed: page.meta.creditsUsed };
}
