import { Agent, request } from 'undici';
import { Webhook } from 'standardwebhooks';
import { guardedLookup, TargetRefused } from './target-guard.js';

/** What one attempt at a delivery came to. */
export type AttemptOutcome =
  /** A 2xx: the receiver has it. */
  | { ok: true; status: number }
  /** Anything else: its status (0 without an answer) and why; `gone` for 410 (disable). */
  | { ok: false; status: number; reason: string; gone?: boolean; refused?: boolean };

/** Options of {@link createWebhookSender}. */
export interface WebhookSenderOptions {
  /** Each attempt's bound, from connecting to the end of the answer. */
  timeoutMs: number;
  /** Loopback and private targets allowed (tests, the sandbox). */
  allowPrivate: boolean;
}

/** What a receiver's answer is read up to; the rest is dropped. */
const ANSWER_MAX_BYTES = 8 * 1024;

/** One delivery's message, as it is signed and sent. */
export interface WebhookMessage {
  /** The delivery's id: `webhook-id`, the same on every attempt. */
  id: string;
  url: string;
  /** The alert's secret (`whsec_…`). */
  secret: string;
  /** The JSON body, as a subscriber receives the payload. */
  body: string;
}

/**
 * Sends deliveries as Standard Webhooks does (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<HMAC-SHA256 of id.timestamp.body>`), one POST per attempt: every
 * connection resolves the host, checks each address against the private ranges (unless allowed)
 * and connects to the address checked; redirects are not followed (a 3xx is a failure); the
 * answer is read up to 8 KB; each attempt is bounded by `timeoutMs`. Never throws: the outcome
 * says what happened, with no secret in it.
 */
export function createWebhookSender(options: WebhookSenderOptions) {
  const dispatcher = new Agent({
    connect: { lookup: guardedLookup(options.allowPrivate), timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 4_000,
  });

  async function send(message: WebhookMessage): Promise<AttemptOutcome> {
    const timestamp = new Date();
    const signature = new Webhook(message.secret).sign(message.id, timestamp, message.body);
    try {
      const response = await request(message.url, {
        method: 'POST',
        dispatcher,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'business-signals-gateway (alerts)',
          'webhook-id': message.id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: message.body,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      await readUpTo(response.body, ANSWER_MAX_BYTES);
      const status = response.statusCode;
      if (status >= 200 && status < 300) return { ok: true, status };
      return {
        ok: false,
        status,
        reason:
          status === 410 ? 'the receiver answered 410 Gone' : `the receiver answered ${status}`,
        gone: status === 410,
      };
    } catch (error) {
      if (
        error instanceof TargetRefused ||
        (error as { cause?: unknown }).cause instanceof TargetRefused
      ) {
        const refusal =
          error instanceof TargetRefused ? error : (error as { cause: TargetRefused }).cause;
        return { ok: false, status: 0, reason: refusal.message, refused: true };
      }
      return { ok: false, status: 0, reason: failureOf(error) };
    }
  }

  return { send, close: () => dispatcher.close() };
}

/** Reads at most `max` bytes of `body`, then drops the rest. */
async function readUpTo(body: AsyncIterable<Buffer> & { destroy(): void }, max: number) {
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read >= max) {
      body.destroy();
      return;
    }
  }
}

/** What a failed attempt says of itself, by Node's and undici's error names (not GraphQL codes). */
const FAILURES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'no answer within the attempt timeout',
  UND_ERR_HEADERS_TIMEOUT: 'no answer within the attempt timeout',
  UND_ERR_BODY_TIMEOUT: 'no answer within the attempt timeout',
  ECONNREFUSED: 'the connection was refused',
  ENOTFOUND: 'the host does not resolve',
  EAI_AGAIN: 'the host does not resolve',
};

/** What a failed attempt says of itself: its kind, never its URL's secrets or the body. */
function failureOf(error: unknown): string {
  const name = (error as { code?: string }).code;
  if (name && FAILURES[name]) return FAILURES[name];
  if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') {
    return 'no answer within the attempt timeout';
  }
  return name ? `the connection failed (${name})` : 'the connection failed';
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;
