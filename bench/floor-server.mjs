/* global process, Buffer */
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
import { fetchList } from './floor-upstream.mjs';

/** The list a query asks for, by its text: only the bench's two are known. */
function route(query) {
  if (query.includes('companies(first: 100)')) return 'companies';
  if (query.includes('fundingEvents(first: 20)')) return 'fundingEvents';
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
      const list = route(JSON.parse(Buffer.concat(chunks).toString()).query ?? '');
      if (!list) return send(res, 400, { errors: [{ message: 'the floor knows two queries' }] });
      const { nodes, creditsUsed } = await fetchList(list, req.headers['x-api-key']);
      send(res, 200, {
        data: { [list]: { nodes } },
        extensions: { credits: { used: creditsUsed }, upstreamRequests: 1 },
      });
    } catch (error) {
      send(res, 502, { errors: [{ message: String(error) }] });
    }
  });
}).listen(Number(process.env.PORT ?? 4001), process.env.HOST ?? '127.0.0.1');
