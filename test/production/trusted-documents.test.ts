import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { preset as clientPreset } from '@graphql-codegen/client-preset';
import { codegen } from '@graphql-codegen/core';
import { buildSchema, parse } from 'graphql';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { CONSOLE_MANIFEST } from '../../src/console/serve.js';
import { StartupError } from '../../src/errors.js';
import { documentHash } from '../../src/production/document-hash.js';
import { createServer } from '../../src/server.js';
import { type GqlEvent, wsClient } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

const QUERY = '{ teams(first: 1) { nodes { name } } }';
const SUBSCRIPTION = 'subscription { teamsWaitingForHuman { execId } }';
const persisted = (document: string) => ({
  extensions: { persistedQuery: { version: 1, sha256Hash: documentHash(document) } },
});

let dir: string;
let generatedManifest: Record<string, string>;
let trustedOnly: TestServer;
let mixed: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentgraph-trusted-'));
  // What the README tells a frontend team to run: the client preset over their operations.
  await clientPresetGenerate(
    'schema.graphql',
    'test/production/sample-operation.graphql',
    `${dir}/gql/`,
    { persistedDocuments: { hashAlgorithm: 'sha256' } },
  );
  generatedManifest = JSON.parse(await readFile(`${dir}/gql/persisted-documents.json`, 'utf8'));
  // The tests' own documents join the generated ones, as a second frontend's would.
  const manifest = {
    ...generatedManifest,
    [documentHash(QUERY)]: QUERY,
    [documentHash(SUBSCRIPTION)]: SUBSCRIPTION,
  };
  await writeFile(`${dir}/manifest.json`, JSON.stringify(manifest));
  [trustedOnly, mixed] = await Promise.all([
    startTestServer({
      TRUSTED_DOCUMENTS: `${dir}/manifest.json`,
      TRUSTED_DOCUMENTS_ONLY: 'true',
      POLL_INTERVAL_MS: '100',
    }),
    startTestServer({ TRUSTED_DOCUMENTS: `${dir}/manifest.json` }),
  ]);
});

/**
 * What `graphql-codegen` does for one `generates` entry with `preset: 'client'`, through
 * codegen's programmatic core: the preset plans the files, core.codegen writes each one's
 * text. (The CLI adds config files, watch mode and loaders for 118 more packages; none of
 * that changes what the preset writes.)
 */
async function clientPresetGenerate(
  schemaFile: string,
  documentFile: string,
  baseOutputDir: string,
  presetConfig: Record<string, unknown>,
): Promise<void> {
  const schemaAst = buildSchema(await readFile(schemaFile, 'utf8'));
  const rawSDL = await readFile(documentFile, 'utf8');
  const documents = [{ location: documentFile, rawSDL, document: parse(rawSDL) }];
  const outputs = await clientPreset.buildGeneratesSection({
    baseOutputDir,
    presetConfig,
    plugins: [],
    pluginMap: {},
    schema: parse(await readFile(schemaFile, 'utf8')),
    schemaAst,
    documents,
    config: {},
  });
  for (const output of outputs) {
    await mkdir(dirname(output.filename), { recursive: true });
    await writeFile(output.filename, await codegen(output));
  }
}

afterAll(async () => {
  await Promise.all([trustedOnly?.stop(), mixed?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

async function postBody(server: TestServer, body: unknown) {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await response.json()) as GqlEvent<Record<string, unknown>>;
}

async function getQuery(server: TestServer, params: Record<string, string>) {
  const response = await fetch(`${server.url}/graphql?${new URLSearchParams(params)}`, {
    headers: { accept: 'application/json' },
  });
  return (await response.json()) as GqlEvent<Record<string, unknown>>;
}

describe('the client preset manifest', () => {
  test('codegen writes hash → document, and the server runs the document by its hash', async () => {
    const [[hash, document]] = Object.entries(generatedManifest) as [[string, string]];
    expect(document).toContain('query FrontendDashboard');
    expect(hash).toBe(`sha256:${documentHash(document)}`);
    // The preset's clients send the manifest key as documentId; Apollo-style ones the bare hex.
    for (const body of [
      { documentId: hash },
      { extensions: { persistedQuery: { version: 1, sha256Hash: documentHash(document) } } },
    ]) {
      const result = await postBody(trustedOnly, body);
      expect(result.errors).toBeUndefined();
      expect(result.data).toMatchObject({ teams: { nodes: expect.any(Array) } });
    }
  });
});

describe('TRUSTED_DOCUMENTS_ONLY=true', () => {
  test('HTTP POST: a document sent as text is refused with PERSISTED_QUERY_REQUIRED', async () => {
    const result = await postBody(trustedOnly, { query: QUERY });
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_REQUIRED');
    expect(result.errors?.[0]?.message).toMatch(/TRUSTED_DOCUMENTS_ONLY/);
  });

  test('HTTP POST: a trusted document runs by its hash', async () => {
    const result = await postBody(trustedOnly, persisted(QUERY));
    expect(result.errors).toBeUndefined();
    expect(result.data).toMatchObject({ teams: { nodes: [{ name: expect.any(String) }] } });
  });

  test('HTTP POST: an unknown hash is PERSISTED_QUERY_NOT_FOUND', async () => {
    const result = await postBody(trustedOnly, persisted('{ agents(first: 1) { totalCount } }'));
    expect(result.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  test('HTTP GET: text is refused, a hash runs', async () => {
    const refused = await getQuery(trustedOnly, { query: QUERY });
    expect(refused.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_REQUIRED');
    const ran = await getQuery(trustedOnly, {
      extensions: JSON.stringify(persisted(QUERY).extensions),
    });
    expect(ran.errors).toBeUndefined();
    expect(ran.data).toMatchObject({ teams: { nodes: expect.any(Array) } });
  });

  test('SSE: a subscription sent as text is refused, one sent by hash streams', async () => {
    const response = await fetch(`${trustedOnly.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    const text = await response.text();
    expect(text).toContain('PERSISTED_QUERY_REQUIRED');
    expect(text).not.toContain('teamsWaitingForHuman');

    const abort = new AbortController();
    const streamed = await fetch(`${trustedOnly.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(persisted(SUBSCRIPTION)),
      signal: abort.signal,
    });
    const reader = streamed.body?.pipeThrough(new TextDecoderStream()).getReader();
    let received = '';
    while (reader && !received.includes('event: next')) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value;
    }
    abort.abort();
    expect(received).toContain('"teamsWaitingForHuman"');
  });

  test('graphql-ws: text is refused with PERSISTED_QUERY_REQUIRED, a hash runs', async () => {
    const client = wsClient(trustedOnly.url);
    try {
      const refused = await new Promise<unknown>((resolve) => {
        client.subscribe(
          { query: SUBSCRIPTION },
          { next: resolve, error: resolve, complete: () => {} },
        );
      });
      expect(JSON.stringify(refused)).toContain('PERSISTED_QUERY_REQUIRED');

      const events: GqlEvent<{ teamsWaitingForHuman: unknown[] }>[] = [];
      const first = new Promise<void>((resolve, reject) => {
        client.subscribe(
          { query: '', ...persisted(SUBSCRIPTION) },
          {
            next: (value) => {
              events.push(value as never);
              resolve();
            },
            error: reject,
            complete: () => {},
          },
        );
      });
      await first;
      expect(events[0]?.errors).toBeUndefined();
      expect(events[0]?.data?.teamsWaitingForHuman).toEqual(expect.any(Array));

      const query = await new Promise<GqlEvent<Record<string, unknown>>>((resolve, reject) => {
        client.subscribe(
          { query: '', ...persisted(QUERY) },
          { next: (value) => resolve(value as never), error: reject, complete: () => {} },
        );
      });
      expect(query.data).toMatchObject({ teams: { nodes: expect.any(Array) } });
    } finally {
      await client.dispose();
    }
  });

  test("the console's own documents run by hash", async () => {
    const manifest = JSON.parse(await readFile(CONSOLE_MANIFEST, 'utf8')) as Record<string, string>;
    const [hash] = Object.entries(manifest).find(([, text]) =>
      text.startsWith('query ConsoleTeams'),
    ) as [string, string];
    const result = await postBody(trustedOnly, {
      extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
    });
    expect(result.errors).toBeUndefined();
    expect(result.data).toMatchObject({ teams: { nodes: expect.any(Array) } });
  });

  test('GraphiQL opens with a note that ad-hoc queries are off', async () => {
    const page = await fetch(`${trustedOnly.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(await page.text()).toContain('ad-hoc queries typed here are refused');
  });
});

describe('TRUSTED_DOCUMENTS without TRUSTED_DOCUMENTS_ONLY', () => {
  test('documents sent as text still run, and hashes run too', async () => {
    expect((await postBody(mixed, { query: QUERY })).errors).toBeUndefined();
    expect((await postBody(mixed, persisted(QUERY))).errors).toBeUndefined();
  });
});

describe('a bad manifest stops start-up with one message', () => {
  const start = (manifest: string) =>
    createServer(
      loadConfig({ PORT: '0', SIMULATE: 'false', TRUSTED_DOCUMENTS: manifest }),
      pino({ level: 'silent' }),
    );

  test.each([
    ['not JSON', '{ nope', /TRUSTED_DOCUMENTS=.*: not JSON/],
    ['an array', '[]', /must be a JSON object of hash → document/],
    [
      'a document the schema does not have',
      JSON.stringify({ abc: '{ noSuchField }' }),
      /1 document\(s\) do not match the schema: abc: Cannot query field "noSuchField"/,
    ],
  ])('%s', async (_, text, message) => {
    const file = join(dir, `bad-${Math.random()}.json`);
    await writeFile(file, text);
    const failed = await start(file).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(StartupError);
    expect((failed as Error).message).toMatch(message);
  });

  test('a missing file', async () => {
    await expect(start(join(dir, 'missing.json'))).rejects.toThrow(/cannot be read \(ENOENT\)/);
  });
});
