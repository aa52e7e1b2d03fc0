import { AgentCard as SdkAgentCard } from '@a2a-js/sdk';
import { describe, expect, test } from 'vitest';
import { normalizeAgentCard, parseAgentCard } from '../../src/a2a/normalize.js';
import { AppError } from '../../src/errors.js';
import { v1Card, v03Card } from './support/cards.js';

const SOURCE = 'agent card of team "T"';

function failure(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

const V1_NORMALIZED = {
  name: 'REPORT_TEAM',
  description: 'REPORT_TEAM description',
  version: '2.1.0',
  protocolVersion: '1.0',
  url: 'https://agents.example.com/REPORT_TEAM/jsonrpc',
  preferredTransport: 'JSONRPC',
  interfaces: [
    {
      url: 'https://agents.example.com/REPORT_TEAM/jsonrpc',
      transport: 'JSONRPC',
      protocolVersion: '1.0',
    },
    {
      url: 'https://agents.example.com/REPORT_TEAM/rest',
      transport: 'HTTP+JSON',
      protocolVersion: '1.0',
    },
  ],
  provider: { organization: 'Example Corp', url: 'https://example.com' },
  iconUrl: 'https://example.com/icon.png',
  documentationUrl: 'https://example.com/docs',
  capabilities: {
    streaming: true,
    pushNotifications: false,
    stateTransitionHistory: null,
    extensions: [
      { uri: 'https://example.com/ext/trace', description: 'Adds trace ids', required: false },
    ],
  },
  defaultInputModes: ['text/plain', 'application/json'],
  defaultOutputModes: ['text/plain'],
  securitySchemes: {
    bearer: {
      httpAuthSecurityScheme: {
        description: 'Database token',
        scheme: 'Bearer',
        bearerFormat: 'JWT',
      },
    },
  },
  skills: [
    {
      id: '5001',
      name: 'SUMMARIZE_REPORT',
      description: 'Summarize uploaded reports and answer follow-up questions',
      tags: ['reports'],
      examples: ['Summarize the Q3 report'],
      inputModes: ['application/pdf'],
      outputModes: [],
    },
  ],
  signed: false,
};

describe('normalizeAgentCard', () => {
  test('reads a 1.0 card in the 1.0 JSON form', () => {
    const json = SdkAgentCard.toJSON(v1Card('REPORT_TEAM'));
    expect(normalizeAgentCard(json, SOURCE)).toEqual(V1_NORMALIZED);
  });

  test('reads a 1.0 card as @a2a-js/sdk’s card handler serialises it', () => {
    const body = JSON.stringify(v1Card('REPORT_TEAM'));
    expect(parseAgentCard(body, SOURCE)).toEqual(V1_NORMALIZED);
  });

  test('translates a 0.3 card through the SDK’s compatibility layer', () => {
    expect(normalizeAgentCard(v03Card('ORDER_TEAM'), SOURCE)).toEqual({
      name: 'ORDER_TEAM',
      description: 'Answers order questions and handles refunds',
      version: '0.9.0',
      protocolVersion: '0.3.0',
      url: 'https://agents.example.com/ORDER_TEAM/a2a/v1',
      preferredTransport: 'JSONRPC',
      interfaces: [
        {
          url: 'https://agents.example.com/ORDER_TEAM/a2a/v1',
          transport: 'JSONRPC',
          protocolVersion: '0.3.0',
        },
        {
          url: 'https://agents.example.com/ORDER_TEAM/a2a/grpc',
          transport: 'GRPC',
          protocolVersion: '0.3',
        },
      ],
      provider: { organization: 'Example Corp', url: 'https://example.com' },
      iconUrl: null,
      documentationUrl: null,
      capabilities: {
        streaming: false,
        pushNotifications: true,
        stateTransitionHistory: true,
        extensions: [{ uri: 'urn:example:priority', description: null, required: true }],
      },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain', 'application/json'],
      securitySchemes: {
        apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
      },
      skills: [
        {
          id: '5002',
          name: 'ORDER_LOOKUP',
          description: 'Look up the order and its shipments by order id',
          tags: ['orders'],
          examples: [],
          inputModes: [],
          outputModes: [],
        },
      ],
      signed: true,
    });
  });

  test('a 0.3 card without protocolVersion reads as 0.3, like the SDK reads it', () => {
    const { protocolVersion: _, ...card } = v03Card('OLD_TEAM');
    expect(normalizeAgentCard(card, SOURCE).protocolVersion).toBe('0.3');
  });

  test('a 1.0 card may leave out empty strings and lists, as protobuf JSON writers do', () => {
    const card = normalizeAgentCard(
      {
        name: 'T',
        version: '1',
        supportedInterfaces: [
          { url: 'https://a/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        ],
        capabilities: {},
        skills: [{ id: '1', name: 'S' }],
      },
      SOURCE,
    );
    expect(card.description).toBe('');
    expect(card.defaultInputModes).toEqual([]);
    expect(card.skills).toEqual([
      {
        id: '1',
        name: 'S',
        description: '',
        tags: [],
        examples: [],
        inputModes: [],
        outputModes: [],
      },
    ]);
    expect(card.capabilities).toEqual({
      streaming: null,
      pushNotifications: null,
      stateTransitionHistory: null,
      extensions: [],
    });
  });

  test('a card carrying both shapes is read through its 1.0 interfaces', () => {
    const json = SdkAgentCard.toJSON(v1Card('BOTH')) as object;
    const superset = { ...json, url: 'https://legacy.example.com' };
    const card = normalizeAgentCard(superset, SOURCE);
    expect(card.url).toBe('https://agents.example.com/BOTH/jsonrpc');
    expect(card.protocolVersion).toBe('1.0');
  });
});

describe('broken cards are UPSTREAM_UNAVAILABLE, saying what is wrong', () => {
  test('text that is not JSON', () => {
    const error = failure(() => parseAgentCard('{"name": "T", ', SOURCE));
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe('The agent card of team "T" from the A2A server is not valid JSON');
  });

  test('JSON that is not an object', () => {
    const error = failure(() => parseAgentCard('[1, 2]', SOURCE));
    expect(error.message).toBe(
      'The agent card of team "T" from the A2A server is not a JSON object',
    );
  });

  test('a 1.0 card lists every missing or mistyped required field', () => {
    const json = SdkAgentCard.toJSON(v1Card('T')) as Record<string, unknown>;
    const skills = json.skills as Record<string, unknown>[];
    const broken = {
      ...json,
      version: undefined,
      defaultOutputModes: 'text/plain',
      skills: [{ ...skills[0], tags: 'reports', name: 42 }],
    };
    const error = failure(() => normalizeAgentCard(broken, SOURCE));
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toBe(
      'The agent card of team "T" from the A2A server is invalid (A2A 1.0 shape): version is missing; ' +
        'defaultOutputModes must be an array of strings; skills[0].name must be a string; skills[0].tags must be an array of strings',
    );
  });

  test('a 1.0 card needs a name, a version and an interface, even in protobuf JSON', () => {
    const json = {
      ...(SdkAgentCard.toJSON(v1Card('T')) as object),
      name: '',
      supportedInterfaces: [],
    };
    expect(failure(() => normalizeAgentCard(json, SOURCE)).message).toBe(
      'The agent card of team "T" from the A2A server is invalid (A2A 1.0 shape): name is empty; supportedInterfaces is empty',
    );
  });

  test('a 0.3 card lists its own required fields', () => {
    const { capabilities: _, skills: __, ...card } = v03Card('T');
    expect(failure(() => normalizeAgentCard(card, SOURCE)).message).toBe(
      'The agent card of team "T" from the A2A server is invalid (A2A 0.3 shape): capabilities is missing; skills is missing',
    );
  });

  test('a 0.3 card the SDK cannot translate: the SDK’s reason (which quotes the card) is the cause, not the message', () => {
    const card = { ...v03Card('T'), securitySchemes: { x: { type: 'kerberos' } } };
    const error = failure(() => normalizeAgentCard(card, SOURCE));
    expect(error.message).toBe(
      'The agent card of team "T" from the A2A server is invalid (A2A 0.3 shape)',
    );
    expect((error.cause as Error).message).toBe('Unsupported v0.3 security scheme type: kerberos');
  });
});
