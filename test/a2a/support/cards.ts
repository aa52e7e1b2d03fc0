import type { AgentCard } from '@a2a-js/sdk';

/** A 1.0 card in the SDK's own type, as a server built with @a2a-js/sdk holds it. */
export function v1Card(name: string, description = `${name} description`): AgentCard {
  return {
    name,
    description,
    version: '2.1.0',
    supportedInterfaces: [
      {
        url: `https://agents.example.com/${name}/jsonrpc`,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: '1.0',
      },
      {
        url: `https://agents.example.com/${name}/rest`,
        protocolBinding: 'HTTP+JSON',
        tenant: '',
        protocolVersion: '1.0',
      },
    ],
    provider: { organization: 'Example Corp', url: 'https://example.com' },
    documentationUrl: 'https://example.com/docs',
    iconUrl: 'https://example.com/icon.png',
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: [
        {
          uri: 'https://example.com/ext/trace',
          description: 'Adds trace ids',
          required: false,
          params: undefined,
        },
      ],
      extendedAgentCard: false,
    },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { description: 'Database token', scheme: 'Bearer', bearerFormat: 'JWT' },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: '5001',
        name: 'SUMMARIZE_REPORT',
        description: 'Summarize uploaded reports and answer follow-up questions',
        tags: ['reports'],
        examples: ['Summarize the Q3 report'],
        inputModes: ['application/pdf'],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/** A 0.3 card as the 0.3 specification writes it (JSON-Schema form). */
export function v03Card(name: string): Record<string, unknown> {
  return {
    protocolVersion: '0.3.0',
    name,
    description: 'Answers order questions and handles refunds',
    url: `https://agents.example.com/${name}/a2a/v1`,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [
      { url: `https://agents.example.com/${name}/a2a/v1`, transport: 'JSONRPC' },
      { url: `https://agents.example.com/${name}/a2a/grpc`, transport: 'GRPC' },
    ],
    provider: { organization: 'Example Corp', url: 'https://example.com' },
    version: '0.9.0',
    capabilities: {
      streaming: false,
      pushNotifications: true,
      stateTransitionHistory: true,
      extensions: [{ uri: 'urn:example:priority', required: true }],
    },
    securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    security: [{ apiKey: [] }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: '5002',
        name: 'ORDER_LOOKUP',
        description: 'Look up the order and its shipments by order id',
        tags: ['orders'],
      },
    ],
    supportsAuthenticatedExtendedCard: false,
    signatures: [{ protected: 'eyJhbGciOiJFUzI1NiJ9', signature: 'c2lnbmF0dXJl' }],
  };
}
