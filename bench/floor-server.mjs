/* global process, URL, Buffer */
/**
 * A floor for `npm run bench`, not a gateway: the least a Node process does to answer the `list`
 * and `wide` queries over the same service. node:http in, one undici GET out, `JSON.parse` of the
 * page, the selected fields copied, `JSON.stringify`, a Buffer written. No GraphQL parsing,
 * validation or execution, no signed ids, no errors mapped, no budget, no logs, no metrics.
 *
 * Its CPU per request, divided by the sandbox's serving the same list directly, is the least that
 * ratio can be for any Node server in this layout (see BENCHMARKS.md, issue 13).
 *
 *   UPSTREAM_URL=http://127.0.0.1:4000 PORT=4001 node bench/floor-server.mjs
 */
import { createServer } from 'node:http';
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

/** The two queries it knows: bench/scenarios.ts's LIST_QUERY and WIDE_QUERY. */
function route(query) {
  if (query.includes('companies(first: 100)'))
    return { field: 'companies', path: '/v1/companies?limit=100', map: company };
  if (query.includes('fundingEvents(first: 20)'))
    return { field: 'fundingEvents', path: '/v1/funding-events?limit=20', map: fundingEvent };
  return null;
}

function send(res, status, value) {
  const body = Buffer.from(JSON.stringify(value));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

createServer((req, res) => {
  if (req.url === '/health') return send(res, 200, { status: 'ok' });
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      const target = route(JSON.parse(Buffer.concat(chunks).toString()).query ?? '');
      if (!target) return send(res, 400, { errors: [{ message: 'the floor knows two queries' }] });
      const response = await pool.request({
        origin: upstream.origin,
        path: target.path,
        method: 'GET',
        headers: { 'x-api-key': req.headers['x-api-key'], accept: 'application/json' },
      });
      const page = JSON.parse(await response.body.text());
      if (response.statusCode !== 200) return send(res, 502, { errors: [{ message: 'upstream' }] });
      send(res, 200, {
        data: { [target.field]: { nodes: page.data.map(target.map) } },
        extensions: { credits: { used: page.meta.creditsUsed }, upstreamRequests: 1 },
      });
    } catch (error) {
      send(res, 500, { errors: [{ message: String(error) }] });
    }
  });
}).listen(Number(process.env.PORT ?? 4001), process.env.HOST ?? '127.0.0.1');
