import { AgentCard as SdkAgentCard } from '@a2a-js/sdk';
import { isLegacyAgentCard, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { AppError } from '../errors.js';

/**
 * One record for an A2A agent card, whichever protocol shape the server sent. Translation
 * between the shapes is the SDK's (its 0.3 compatibility layer and its 1.0 JSON codec); this
 * module adds what the SDK leaves to its callers: checking that the required fields are there,
 * so that a broken card is reported with what is wrong instead of read as empty strings.
 */
export interface AgentCard {
  readonly name: string;
  readonly description: string;
  readonly version: string;
  /** Of the preferred (first) interface: "1.0", "0.3", … */
  readonly protocolVersion: string;
  /** Of the preferred interface. */
  readonly url: string;
  /** Protocol binding of the preferred interface: JSONRPC, GRPC, HTTP+JSON. */
  readonly preferredTransport: string;
  /** Every interface, the preferred one first. */
  readonly interfaces: readonly AgentCardInterface[];
  readonly provider: { readonly organization: string; readonly url: string } | null;
  readonly iconUrl: string | null;
  readonly documentationUrl: string | null;
  readonly capabilities: AgentCardCapabilities;
  readonly defaultInputModes: readonly string[];
  readonly defaultOutputModes: readonly string[];
  /** Scheme name → scheme, in the A2A 1.0 JSON form (0.3 schemes are translated). */
  readonly securitySchemes: Readonly<Record<string, unknown>>;
  readonly skills: readonly AgentCardSkill[];
  /** The card carries JWS signatures (they are not verified here). */
  readonly signed: boolean;
}

export interface AgentCardInterface {
  readonly url: string;
  readonly transport: string;
  readonly protocolVersion: string;
}

export interface AgentCardCapabilities {
  readonly streaming: boolean | null;
  readonly pushNotifications: boolean | null;
  /** A 0.3 capability that 1.0 dropped: null on 1.0 cards. */
  readonly stateTransitionHistory: boolean | null;
  readonly extensions: readonly {
    readonly uri: string;
    readonly description: string | null;
    readonly required: boolean;
  }[];
}

export interface AgentCardSkill {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly examples: readonly string[];
  /** Empty when the skill uses the card's default modes. */
  readonly inputModes: readonly string[];
  readonly outputModes: readonly string[];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

type Need = 'required' | 'nonEmpty' | 'optional';

/** Collects every missing, empty or mistyped field of a card, by JSON path. */
class FieldCheck {
  readonly problems: string[] = [];

  string(object: Json, key: string, path: string, need: Need): void {
    const value = object[key];
    if (value === undefined && need === 'optional') return;
    if (typeof value !== 'string') this.fail(`${path}${key}`, 'a string', value);
    else if (value === '' && need === 'nonEmpty') this.problems.push(`${path}${key} is empty`);
  }

  strings(object: Json, key: string, path: string, need: Need): void {
    const value = object[key];
    if (value === undefined && need === 'optional') return;
    if (!isStringArray(value)) this.fail(`${path}${key}`, 'an array of strings', value);
  }

  object(object: Json, key: string, path: string, need: Need): Json | undefined {
    const value = object[key];
    if (value === undefined && need === 'optional') return undefined;
    if (isObject(value)) return value;
    this.fail(`${path}${key}`, 'an object', value);
    return undefined;
  }

  objects(object: Json, key: string, path: string, need: Need): [Json, string][] {
    const value = object[key];
    if (value === undefined && need === 'optional') return [];
    if (!Array.isArray(value)) {
      this.fail(`${path}${key}`, 'an array', value);
      return [];
    }
    if (value.length === 0 && need === 'nonEmpty') this.problems.push(`${path}${key} is empty`);
    return value.flatMap((item, i): [Json, string][] => {
      if (isObject(item)) return [[item, `${path}${key}[${i}].`]];
      this.fail(`${path}${key}[${i}]`, 'an object', item);
      return [];
    });
  }

  private fail(path: string, expected: string, value: unknown): void {
    this.problems.push(value === undefined ? `${path} is missing` : `${path} must be ${expected}`);
  }
}

/**
 * A 1.0 card is protobuf JSON, whose writers may leave out empty strings and empty lists
 * (a skill without tags, an empty description): those read as empty, as the SDK's codec reads
 * them. What a client cannot do without must be there and non-empty: name, version,
 * capabilities, and at least one interface with its URL, binding and protocol version.
 */
function checkV1(card: Json): string[] {
  const check = new FieldCheck();
  check.string(card, 'name', '', 'nonEmpty');
  check.string(card, 'version', '', 'nonEmpty');
  for (const key of ['description', 'iconUrl', 'documentationUrl'])
    check.string(card, key, '', 'optional');
  for (const [entry, path] of check.objects(card, 'supportedInterfaces', '', 'nonEmpty')) {
    for (const key of ['url', 'protocolBinding', 'protocolVersion'])
      check.string(entry, key, path, 'nonEmpty');
  }
  const provider = check.object(card, 'provider', '', 'optional');
  if (provider) {
    check.string(provider, 'organization', 'provider.', 'optional');
    check.string(provider, 'url', 'provider.', 'optional');
  }
  const capabilities = check.object(card, 'capabilities', '', 'required');
  if (capabilities) {
    for (const [extension, path] of check.objects(
      capabilities,
      'extensions',
      'capabilities.',
      'optional',
    ))
      check.string(extension, 'uri', path, 'nonEmpty');
  }
  check.strings(card, 'defaultInputModes', '', 'optional');
  check.strings(card, 'defaultOutputModes', '', 'optional');
  check.object(card, 'securitySchemes', '', 'optional');
  check.objects(card, 'signatures', '', 'optional');
  for (const [skill, path] of check.objects(card, 'skills', '', 'optional')) {
    check.string(skill, 'id', path, 'nonEmpty');
    check.string(skill, 'name', path, 'nonEmpty');
    check.string(skill, 'description', path, 'optional');
    for (const key of ['tags', 'examples', 'inputModes', 'outputModes'])
      check.strings(skill, key, path, 'optional');
  }
  return check.problems;
}

/** A 0.3 card is JSON-Schema JSON: its required fields are always written. */
function checkV03(card: Json): string[] {
  const check = new FieldCheck();
  for (const key of ['name', 'description', 'url', 'version'])
    check.string(card, key, '', 'required');
  // The SDK reads a 0.3 card without protocolVersion as 0.3, as 0.3 servers that predate the
  // field expect; a present value must still be a string.
  for (const key of ['protocolVersion', 'preferredTransport', 'iconUrl', 'documentationUrl'])
    check.string(card, key, '', 'optional');
  for (const [entry, path] of check.objects(card, 'additionalInterfaces', '', 'optional')) {
    check.string(entry, 'url', path, 'required');
    check.string(entry, 'transport', path, 'required');
  }
  const provider = check.object(card, 'provider', '', 'optional');
  if (provider) {
    check.string(provider, 'organization', 'provider.', 'required');
    check.string(provider, 'url', 'provider.', 'required');
  }
  const capabilities = check.object(card, 'capabilities', '', 'required');
  if (capabilities) {
    for (const [extension, path] of check.objects(
      capabilities,
      'extensions',
      'capabilities.',
      'optional',
    ))
      check.string(extension, 'uri', path, 'required');
  }
  check.strings(card, 'defaultInputModes', '', 'required');
  check.strings(card, 'defaultOutputModes', '', 'required');
  check.object(card, 'securitySchemes', '', 'optional');
  check.objects(card, 'signatures', '', 'optional');
  for (const [skill, path] of check.objects(card, 'skills', '', 'required')) {
    for (const key of ['id', 'name', 'description']) check.string(skill, key, path, 'required');
    check.strings(skill, 'tags', path, 'required');
    for (const key of ['examples', 'inputModes', 'outputModes'])
      check.strings(skill, key, path, 'optional');
  }
  return check.problems;
}

/**
 * @a2a-js/sdk's own card handler (1.3) writes a 1.0 card with JSON.stringify, so its security
 * schemes arrive as `{scheme: {$case, value}}` rather than the 1.0 JSON `{<case>: value}` that
 * the SDK's parser reads. Both are accepted.
 */
function withJsonSecuritySchemes(card: Json): Json {
  if (!isObject(card.securitySchemes)) return card;
  const schemes: Json = {};
  for (const [name, scheme] of Object.entries(card.securitySchemes)) {
    const oneOf = isObject(scheme) && isObject(scheme.scheme) ? scheme.scheme : undefined;
    schemes[name] =
      oneOf && typeof oneOf.$case === 'string' ? { [oneOf.$case]: oneOf.value } : scheme;
  }
  return { ...card, securitySchemes: schemes };
}

function fromSdk(core: SdkAgentCard, raw: Json): AgentCard {
  const interfaces: AgentCardInterface[] = [];
  for (const entry of core.supportedInterfaces) {
    const normalized = {
      url: entry.url,
      transport: entry.protocolBinding,
      protocolVersion: entry.protocolVersion,
    };
    // 0.3 cards conventionally repeat the main URL in additionalInterfaces.
    if (!interfaces.some((i) => i.url === normalized.url && i.transport === normalized.transport))
      interfaces.push(normalized);
  }
  const preferred = interfaces[0] as AgentCardInterface;
  const capabilities = core.capabilities;
  const rawCapabilities = raw.capabilities as Json;
  const json = SdkAgentCard.toJSON(core) as { securitySchemes?: Record<string, unknown> };
  return {
    name: core.name,
    description: core.description,
    version: core.version,
    protocolVersion: preferred.protocolVersion,
    url: preferred.url,
    preferredTransport: preferred.transport,
    interfaces,
    provider: core.provider
      ? { organization: core.provider.organization, url: core.provider.url }
      : null,
    iconUrl: core.iconUrl ?? null,
    documentationUrl: core.documentationUrl ?? null,
    capabilities: {
      streaming: capabilities?.streaming ?? null,
      pushNotifications: capabilities?.pushNotifications ?? null,
      stateTransitionHistory:
        typeof rawCapabilities.stateTransitionHistory === 'boolean'
          ? rawCapabilities.stateTransitionHistory
          : null,
      extensions: (capabilities?.extensions ?? []).map((extension) => ({
        uri: extension.uri,
        description: extension.description || null,
        required: extension.required === true,
      })),
    },
    defaultInputModes: core.defaultInputModes,
    defaultOutputModes: core.defaultOutputModes,
    securitySchemes: json.securitySchemes ?? {},
    skills: core.skills.map((skill) => ({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      tags: skill.tags,
      examples: skill.examples,
      inputModes: skill.inputModes,
      outputModes: skill.outputModes,
    })),
    signed: core.signatures.length > 0,
  };
}

/**
 * A card as the server sent it (text) → the normalized record. `source` names the card in
 * error messages (`agent card of team "X"`). Anything unusable is UPSTREAM_UNAVAILABLE, with
 * every problem listed.
 */
export function parseAgentCard(body: string, source: string): AgentCard {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (error) {
    throw new AppError(
      'UPSTREAM_UNAVAILABLE',
      `The ${source} from the A2A server is not valid JSON`,
      { cause: error },
    );
  }
  return normalizeAgentCard(raw, source);
}

export function normalizeAgentCard(raw: unknown, source: string): AgentCard {
  if (!isObject(raw)) {
    throw new AppError(
      'UPSTREAM_UNAVAILABLE',
      `The ${source} from the A2A server is not a JSON object`,
    );
  }
  const legacy = isLegacyAgentCard(raw);
  const shape = legacy ? 'A2A 0.3' : 'A2A 1.0';
  const problems = legacy ? checkV03(raw) : checkV1(raw);
  if (problems.length > 0) {
    throw new AppError(
      'UPSTREAM_UNAVAILABLE',
      `The ${source} from the A2A server is invalid (${shape} shape): ${problems.join('; ')}`,
    );
  }
  let core: SdkAgentCard;
  try {
    core = legacy ? parseLegacyAgentCard(raw) : SdkAgentCard.fromJSON(withJsonSecuritySchemes(raw));
  } catch (error) {
    // The SDK's text may quote the card; the client logs it, the message does not carry it.
    throw new AppError(
      'UPSTREAM_UNAVAILABLE',
      `The ${source} from the A2A server is invalid (${shape} shape)`,
      { cause: error },
    );
  }
  return fromSdk(core, raw);
}
