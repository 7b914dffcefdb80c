import { ANSWER_OPEN, answerTail } from './known-answers.js';

const DATA_OPEN = Buffer.from(ANSWER_OPEN);
const WHOLE = ',"hasNext":false';

/**
 * A kept answer's bytes as its run sent them, by the media type it was sent as (`contentType`):
 * JSON, `{"data":…,"extensions":…}`; for a run that asked for an answer in parts, the whole answer
 * as the one payload (`hasNext: false`) of a `multipart/mixed` body (boundary `-`, as Yoga writes
 * one) or of an event stream (`next`, then `complete`). The kept `data` is sent as it is, never
 * copied.
 */
export function framedAnswer(
  contentType: string | undefined,
  data: Buffer,
  extensions: unknown,
): Buffer[] {
  const type = contentType?.toLowerCase() ?? '';
  const parts = type.startsWith('multipart/mixed') || type.startsWith('text/event-stream');
  const tail = Buffer.from(`${parts ? WHOLE : ''}${answerTail(extensions)}`);
  const payload = [DATA_OPEN, data, tail];
  if (type.startsWith('multipart/mixed')) {
    const length = DATA_OPEN.length + data.length + tail.length;
    return [
      Buffer.from(
        `\r\n---\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${length}\r\n\r\n`,
      ),
      ...payload,
      Buffer.from('\r\n-----\r\n'),
    ];
  }
  if (type.startsWith('text/event-stream')) {
    return [
      Buffer.from(':\n\nevent: next\ndata: '),
      ...payload,
      Buffer.from('\n\nevent: complete\ndata:\n\n'),
    ];
  }
  return payload;
}
