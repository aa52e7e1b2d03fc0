import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * Rejects a POST body that is not valid UTF-8. JSON must be UTF-8 (RFC 8259); decoding it
 * leniently would turn stray bytes into U+FFFD and send them on as names and filter values.
 * Yoga's body-size limit wraps this parser, so at most MAX_BODY_BYTES are read here.
 */
export function strictUtf8Body(): Plugin {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || request.method !== 'POST' || isMultipart(request)) return;
      setRequestParser(async (limited) => {
        const body = new Uint8Array(await limited.arrayBuffer());
        try {
          decoder.decode(body);
        } catch {
          throw createGraphQLError('The request body is not valid UTF-8', {
            extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
          });
        }
        return requestParser(
          new fetchAPI.Request(limited.url, {
            method: limited.method,
            headers: limited.headers,
            body,
          }),
        );
      });
    },
  };
}

/** Multipart bodies carry files, which are binary by nature; yoga parses them on its own. */
function isMultipart(request: Request): boolean {
  return request.headers.get('content-type')?.toLowerCase().startsWith('multipart/') ?? false;
}
