import { isUtf8 } from 'node:buffer';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * Reads a request body once, counting its bytes and, for JSON and form bodies, checking that
 * it is valid UTF-8, then hands yoga's parser the bytes.
 *
 * It replaces yoga's `maxRequestBodySize`, which pipes every body through a web
 * TransformStream: on Node that is a stream pipeline with its own AbortController aborted
 * (a DOMException built) on every request — a tenth of a `{ __typename }` request's CPU.
 * Like yoga's, it refuses a Content-Length over the limit before reading and stops reading a
 * chunked body as soon as it passes the limit.
 *
 * A body with a Content-Length (every client's JSON POST) cannot pass it: node:http ends the
 * body there. It is read by the request's own `bytes()`, which @whatwg-node's Body keeps, so
 * yoga's parser reads those bytes again from the same request (its `text()` and `json()` start
 * from them): no web stream, no second Request. Only a chunked body is read chunk by chunk,
 * and handed over in a Request of its bytes.
 *
 * JSON must be UTF-8 (RFC 8259): decoding it leniently would turn stray bytes into U+FFFD and
 * send them on as names and filter values. Multipart bodies carry files, binary by nature.
 */
export function requestBodyLimit(maxBytes: number): NonNullable<Plugin['onRequestParse']> {
  return ({ request, requestParser, setRequestParser, fetchAPI }) => {
    const contentLength = request.headers.get('content-length');
    if (contentLength != null) {
      if (!/^\d+$/.test(contentLength)) {
        throw createGraphQLError('Content-Length header is invalid.', {
          extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
        });
      }
      if (Number(contentLength) > maxBytes) throw tooLarge();
    }
    // Not `request.body`: on @whatwg-node each read of it wraps the socket in a web stream.
    if (!requestParser || request.method === 'GET' || request.method === 'HEAD') return;
    const textual = !isMultipart(request);
    const checked = (body: Uint8Array) => {
      if (textual && !isUtf8(body)) {
        throw createGraphQLError('The request body is not valid UTF-8', {
          extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
        });
      }
    };
    setRequestParser(async (unread) => {
      if (contentLength != null) {
        checked(await unread.bytes());
        return requestParser(unread);
      }
      const body = await readAtMost(unread, maxBytes);
      checked(body);
      return requestParser(
        new fetchAPI.Request(unread.url, {
          method: unread.method,
          headers: unread.headers,
          signal: unread.signal,
          body,
        }),
      );
    });
  };
}

async function readAtMost(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  if (request.body) {
    // Not `for await`: leaving that loop early destroys the socket, and the client would see a
    // reset instead of the 413. The rest of the body stays unread (see tooLarge).
    const chunksOf = (request.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    for (let next = await chunksOf.next(); !next.done; next = await chunksOf.next()) {
      length += next.value.byteLength;
      if (length > maxBytes) throw tooLarge();
      chunks.push(next.value);
    }
  }
  // Buffer.concat allocates an ArrayBuffer (never a SharedArrayBuffer); @types/node says Like.
  return Buffer.concat(chunks, length) as Uint8Array<ArrayBuffer>;
}

/**
 * The refusal closes the connection once it is sent (`Connection: close`, which Node's server
 * honours by ending the socket): Node reads on to the next request only past a body nobody
 * began to read, so a keep-alive client's next request, behind the unread rest of a chunked
 * body, would otherwise never be answered. Reading that rest to keep the connection would
 * spend the bandwidth the limit is there to refuse.
 */
function tooLarge() {
  return createGraphQLError('Request body too large', {
    extensions: {
      code: 'BAD_USER_INPUT',
      http: { status: 413, headers: { connection: 'close' } },
    },
  });
}

function isMultipart(request: Request): boolean {
  return request.headers.get('content-type')?.toLowerCase().startsWith('multipart/') ?? false;
}
