/**
 * Minimal Swagger 1.2 declarations of the Asterisk REST Interface, shaped like the documents Asterisk serves
 * under `/ari/api-docs/`. They hold only what ari-client 2.2 (through swagger-client 2.0.26) needs to attach
 * the operations we call and to decode every event the fake sends: ari-client looks each WebSocket message's
 * `type` up in the `events` resource's models and throws for an undeclared one.
 *
 * `basePath` is a placeholder; the fake server writes the request's own origin into it.
 */

type Param = {
  name: string;
  paramType: 'path' | 'query' | 'body';
  dataType: string;
  required?: boolean;
  allowMultiple?: boolean;
  description?: string;
  allowableValues?: { valueType: 'LIST'; values: string[] };
};

type Operation = {
  httpMethod: 'GET' | 'POST' | 'DELETE' | 'PUT';
  nickname: string;
  summary: string;
  responseClass: string;
  parameters?: Param[];
  errorResponses?: { code: number; reason: string }[];
};

type ApiDeclaration = {
  apiVersion: string;
  swaggerVersion: '1.2';
  basePath: string;
  resourcePath: string;
  apis: { path: string; description: string; operations: Operation[] }[];
  models: Record<string, { id: string; description?: string; properties: Record<string, { type: string; required?: boolean; description?: string }> }>;
};

export const ARI_API_VERSION = '9.0.0';
const BASE_PLACEHOLDER = 'http://localhost:8088/ari';

const channelIdPath: Param = { name: 'channelId', paramType: 'path', dataType: 'string', required: true };

const HANGUP_REASONS = [
  'normal', 'busy', 'congestion', 'no_answer', 'timeout', 'rejected', 'unallocated', 'normal_unspecified',
  'number_incomplete', 'codec_mismatch', 'interworking', 'failure', 'answered_elsewhere',
];

const originateParams: Param[] = [
  { name: 'endpoint', paramType: 'query', dataType: 'string', required: true, description: 'Endpoint to call, tech/resource' },
  { name: 'extension', paramType: 'query', dataType: 'string' },
  { name: 'context', paramType: 'query', dataType: 'string' },
  { name: 'priority', paramType: 'query', dataType: 'long' },
  { name: 'label', paramType: 'query', dataType: 'string' },
  { name: 'app', paramType: 'query', dataType: 'string', description: 'Stasis application to place the channel into' },
  { name: 'appArgs', paramType: 'query', dataType: 'string' },
  { name: 'callerId', paramType: 'query', dataType: 'string' },
  { name: 'timeout', paramType: 'query', dataType: 'int' },
  { name: 'variables', paramType: 'body', dataType: 'containers' },
  { name: 'otherChannelId', paramType: 'query', dataType: 'string' },
  { name: 'originator', paramType: 'query', dataType: 'string' },
  { name: 'formats', paramType: 'query', dataType: 'string' },
];

const channelModels: ApiDeclaration['models'] = {
  CallerID: {
    id: 'CallerID',
    properties: { name: { type: 'string', required: true }, number: { type: 'string', required: true } },
  },
  DialplanCEP: {
    id: 'DialplanCEP',
    properties: {
      context: { type: 'string', required: true },
      exten: { type: 'string', required: true },
      priority: { type: 'long', required: true },
      app_name: { type: 'string', required: true },
      app_data: { type: 'string', required: true },
    },
  },
  Channel: {
    id: 'Channel',
    properties: {
      id: { type: 'string', required: true },
      name: { type: 'string', required: true },
      state: { type: 'string', required: true },
      caller: { type: 'CallerID', required: true },
      connected: { type: 'CallerID', required: true },
      accountcode: { type: 'string', required: true },
      dialplan: { type: 'DialplanCEP', required: true },
      creationtime: { type: 'Date', required: true },
      language: { type: 'string', required: true },
      channelvars: { type: 'object', required: false },
    },
  },
  Variable: { id: 'Variable', properties: { value: { type: 'string', required: true } } },
};

function channels(): ApiDeclaration {
  return {
    apiVersion: ARI_API_VERSION,
    swaggerVersion: '1.2',
    basePath: BASE_PLACEHOLDER,
    resourcePath: '/api-docs/channels.{format}',
    apis: [
      {
        path: '/channels',
        description: 'Active channels',
        operations: [
          { httpMethod: 'GET', nickname: 'list', summary: 'List all active channels in Asterisk.', responseClass: 'List[Channel]' },
          {
            httpMethod: 'POST',
            nickname: 'originate',
            summary: 'Create a new channel (originate).',
            responseClass: 'Channel',
            parameters: [...originateParams, { name: 'channelId', paramType: 'query', dataType: 'string' }],
            errorResponses: [
              { code: 400, reason: 'Invalid parameters for originating a channel.' },
              { code: 409, reason: 'Channel with given unique ID already exists.' },
            ],
          },
        ],
      },
      {
        path: '/channels/externalMedia',
        description: 'Create a channel to an External Media source/sink.',
        operations: [
          {
            httpMethod: 'POST', nickname: 'externalMedia', summary: 'Start an External Media session.', responseClass: 'Channel',
            parameters: [
              { name: 'channelId', paramType: 'query', dataType: 'string' },
              { name: 'app', paramType: 'query', dataType: 'string', required: true },
              { name: 'variables', paramType: 'body', dataType: 'containers' },
              { name: 'external_host', paramType: 'query', dataType: 'string' },
              { name: 'encapsulation', paramType: 'query', dataType: 'string', allowableValues: { valueType: 'LIST', values: ['rtp', 'audiosocket', 'none'] } },
              { name: 'transport', paramType: 'query', dataType: 'string', allowableValues: { valueType: 'LIST', values: ['udp', 'tcp', 'websocket'] } },
              { name: 'connection_type', paramType: 'query', dataType: 'string', allowableValues: { valueType: 'LIST', values: ['client', 'server'] } },
              { name: 'format', paramType: 'query', dataType: 'string', required: true },
              { name: 'direction', paramType: 'query', dataType: 'string', allowableValues: { valueType: 'LIST', values: ['both', 'in', 'out'] } },
              { name: 'data', paramType: 'query', dataType: 'string' },
              { name: 'transport_data', paramType: 'query', dataType: 'string' },
            ],
            errorResponses: [
              { code: 400, reason: 'Invalid parameters' },
              { code: 409, reason: 'Channel is not in a Stasis application; Channel is already bridged' },
            ],
          },
        ],
      },
      {
        path: '/channels/{channelId}',
        description: 'Active channel',
        operations: [
          {
            httpMethod: 'GET', nickname: 'get', summary: 'Channel details.', responseClass: 'Channel',
            parameters: [channelIdPath], errorResponses: [{ code: 404, reason: 'Channel not found' }],
          },
          {
            httpMethod: 'POST', nickname: 'originateWithId', summary: 'Create a new channel (originate with id).',
            responseClass: 'Channel', parameters: [channelIdPath, ...originateParams],
            errorResponses: [{ code: 409, reason: 'Channel with given unique ID already exists.' }],
          },
          {
            httpMethod: 'DELETE', nickname: 'hangup', summary: 'Delete (i.e. hangup) a channel.', responseClass: 'void',
            parameters: [
              channelIdPath,
              { name: 'reason_code', paramType: 'query', dataType: 'string' },
              { name: 'reason', paramType: 'query', dataType: 'string', allowableValues: { valueType: 'LIST', values: HANGUP_REASONS } },
            ],
            errorResponses: [{ code: 404, reason: 'Channel not found' }],
          },
        ],
      },
      {
        path: '/channels/{channelId}/continue',
        description: 'Exit application; continue execution in the dialplan',
        operations: [
          {
            httpMethod: 'POST', nickname: 'continueInDialplan', summary: 'Exit application; continue execution in the dialplan.',
            responseClass: 'void',
            parameters: [
              channelIdPath,
              { name: 'context', paramType: 'query', dataType: 'string' },
              { name: 'extension', paramType: 'query', dataType: 'string' },
              { name: 'priority', paramType: 'query', dataType: 'int' },
              { name: 'label', paramType: 'query', dataType: 'string' },
            ],
          },
        ],
      },
      {
        path: '/channels/{channelId}/answer',
        description: 'Answer a channel',
        operations: [
          { httpMethod: 'POST', nickname: 'answer', summary: 'Answer a channel.', responseClass: 'void', parameters: [channelIdPath] },
        ],
      },
      {
        path: '/channels/{channelId}/ring',
        description: 'Send a ringing indication to a channel',
        operations: [
          { httpMethod: 'POST', nickname: 'ring', summary: 'Indicate ringing to a channel.', responseClass: 'void', parameters: [channelIdPath] },
        ],
      },
      {
        path: '/channels/{channelId}/variable',
        description: 'Variables on a channel',
        operations: [
          {
            httpMethod: 'GET', nickname: 'getChannelVar', summary: 'Get the value of a channel variable or function.',
            responseClass: 'Variable',
            parameters: [channelIdPath, { name: 'variable', paramType: 'query', dataType: 'string', required: true }],
          },
        ],
      },
    ],
    models: channelModels,
  };
}

const bridgeIdPath: Param = { name: 'bridgeId', paramType: 'path', dataType: 'string', required: true };

/** Bridges: what a transfer needs (create with an id, add channels, destroy). */
function bridges(): ApiDeclaration {
  return {
    apiVersion: ARI_API_VERSION,
    swaggerVersion: '1.2',
    basePath: BASE_PLACEHOLDER,
    resourcePath: '/api-docs/bridges.{format}',
    apis: [
      {
        path: '/bridges',
        description: 'Active bridges',
        operations: [
          { httpMethod: 'GET', nickname: 'list', summary: 'List all active bridges in Asterisk.', responseClass: 'List[Bridge]' },
          {
            httpMethod: 'POST', nickname: 'create', summary: 'Create a new bridge.', responseClass: 'Bridge',
            parameters: [
              { name: 'type', paramType: 'query', dataType: 'string' },
              { name: 'bridgeId', paramType: 'query', dataType: 'string' },
              { name: 'name', paramType: 'query', dataType: 'string' },
            ],
            errorResponses: [{ code: 409, reason: 'Bridge with the same bridgeId already exists' }],
          },
        ],
      },
      {
        path: '/bridges/{bridgeId}',
        description: 'Individual bridge',
        operations: [
          {
            httpMethod: 'GET', nickname: 'get', summary: 'Get bridge details.', responseClass: 'Bridge',
            parameters: [bridgeIdPath], errorResponses: [{ code: 404, reason: 'Bridge not found' }],
          },
          {
            httpMethod: 'POST', nickname: 'createWithId', summary: 'Create a new bridge or updates an existing one.', responseClass: 'Bridge',
            parameters: [
              { name: 'type', paramType: 'query', dataType: 'string' },
              bridgeIdPath,
              { name: 'name', paramType: 'query', dataType: 'string' },
            ],
          },
          {
            httpMethod: 'DELETE', nickname: 'destroy', summary: 'Shut down a bridge.', responseClass: 'void',
            parameters: [bridgeIdPath], errorResponses: [{ code: 404, reason: 'Bridge not found' }],
          },
        ],
      },
      {
        path: '/bridges/{bridgeId}/addChannel',
        description: 'Add a channel to a bridge',
        operations: [
          {
            httpMethod: 'POST', nickname: 'addChannel', summary: 'Add a channel to a bridge.', responseClass: 'void',
            parameters: [
              bridgeIdPath,
              { name: 'channel', paramType: 'query', dataType: 'string', required: true, allowMultiple: true },
              { name: 'role', paramType: 'query', dataType: 'string' },
            ],
            errorResponses: [
              { code: 400, reason: 'Channel not found' },
              { code: 404, reason: 'Bridge not found' },
              { code: 409, reason: 'Bridge not in Stasis application; Channel currently recording' },
              { code: 422, reason: 'Channel not in Stasis application' },
            ],
          },
        ],
      },
    ],
    models: {
      Bridge: {
        id: 'Bridge',
        properties: {
          id: { type: 'string', required: true },
          technology: { type: 'string', required: true },
          bridge_type: { type: 'string', required: true },
          bridge_class: { type: 'string', required: true },
          creator: { type: 'string', required: true },
          name: { type: 'string', required: true },
          channels: { type: 'List[string]', required: true },
          creationtime: { type: 'Date', required: true },
        },
      },
    },
  };
}

function applications(): ApiDeclaration {
  return {
    apiVersion: ARI_API_VERSION,
    swaggerVersion: '1.2',
    basePath: BASE_PLACEHOLDER,
    resourcePath: '/api-docs/applications.{format}',
    apis: [
      {
        path: '/applications',
        description: 'Stasis applications',
        operations: [{ httpMethod: 'GET', nickname: 'list', summary: 'List all applications.', responseClass: 'List[Application]' }],
      },
      {
        path: '/applications/{applicationName}',
        description: 'Stasis application',
        operations: [
          {
            httpMethod: 'GET', nickname: 'get', summary: 'Get details of an application.', responseClass: 'Application',
            parameters: [{ name: 'applicationName', paramType: 'path', dataType: 'string', required: true }],
          },
        ],
      },
    ],
    models: {
      Application: {
        id: 'Application',
        properties: {
          name: { type: 'string', required: true },
          channel_ids: { type: 'List[string]', required: true },
          bridge_ids: { type: 'List[string]', required: true },
          endpoint_ids: { type: 'List[string]', required: true },
          device_names: { type: 'List[string]', required: true },
        },
      },
    },
  };
}

function asterisk(): ApiDeclaration {
  return {
    apiVersion: ARI_API_VERSION,
    swaggerVersion: '1.2',
    basePath: BASE_PLACEHOLDER,
    resourcePath: '/api-docs/asterisk.{format}',
    apis: [
      {
        path: '/asterisk/ping',
        description: 'Asterisk ping',
        operations: [{ httpMethod: 'GET', nickname: 'ping', summary: 'Response pong message.', responseClass: 'AsteriskPing' }],
      },
    ],
    models: {
      AsteriskPing: {
        id: 'AsteriskPing',
        properties: {
          asterisk_id: { type: 'string', required: true },
          ping: { type: 'string', required: true },
          timestamp: { type: 'string', required: true },
        },
      },
    },
  };
}

/** The event types the fake emits; each one is declared below (ari-client throws on an undeclared type). */
export const ARI_EVENT_TYPES = [
  'StasisStart', 'StasisEnd', 'ChannelCreated', 'ChannelStateChange', 'ChannelDestroyed', 'ChannelHangupRequest',
  'ChannelDialplan', 'ChannelVarset', 'ChannelCallerId', 'ChannelDtmfReceived', 'Dial', 'ApplicationReplaced',
] as const;
export type AriEventType = (typeof ARI_EVENT_TYPES)[number];

function events(): ApiDeclaration {
  const base = {
    type: { type: 'string', required: true, description: 'Indicates the type of this message.' },
    asterisk_id: { type: 'string', required: false },
    application: { type: 'string', required: true },
    timestamp: { type: 'Date', required: true },
  };
  const channel = { channel: { type: 'Channel', required: true } };
  const model = (id: string, props: Record<string, { type: string; required?: boolean }>) => ({
    id,
    properties: { ...base, ...props },
  });
  return {
    apiVersion: ARI_API_VERSION,
    swaggerVersion: '1.2',
    basePath: BASE_PLACEHOLDER,
    resourcePath: '/api-docs/events.{format}',
    apis: [
      {
        path: '/events',
        description: 'Events from Asterisk to applications',
        operations: [
          {
            httpMethod: 'GET', nickname: 'eventWebsocket', summary: 'WebSocket connection for events.', responseClass: 'Message',
            parameters: [
              { name: 'app', paramType: 'query', dataType: 'string', required: true, allowMultiple: true },
              { name: 'subscribeAll', paramType: 'query', dataType: 'boolean' },
            ],
          },
        ],
      },
    ],
    models: {
      Message: { id: 'Message', properties: { type: base.type, asterisk_id: base.asterisk_id } },
      Event: model('Event', {}),
      StasisStart: model('StasisStart', { args: { type: 'List[string]', required: true }, ...channel, replace_channel: { type: 'Channel', required: false } }),
      StasisEnd: model('StasisEnd', channel),
      ChannelCreated: model('ChannelCreated', channel),
      ChannelStateChange: model('ChannelStateChange', channel),
      ChannelDestroyed: model('ChannelDestroyed', {
        cause: { type: 'int', required: true }, cause_txt: { type: 'string', required: true }, ...channel,
      }),
      ChannelHangupRequest: model('ChannelHangupRequest', {
        cause: { type: 'int', required: false }, soft: { type: 'boolean', required: false }, ...channel,
      }),
      ChannelDialplan: model('ChannelDialplan', {
        ...channel, dialplan_app: { type: 'string', required: true }, dialplan_app_data: { type: 'string', required: true },
      }),
      ChannelVarset: model('ChannelVarset', {
        variable: { type: 'string', required: true }, value: { type: 'string', required: true }, channel: { type: 'Channel', required: false },
      }),
      ChannelCallerId: model('ChannelCallerId', {
        caller_presentation: { type: 'int', required: true }, caller_presentation_txt: { type: 'string', required: true }, ...channel,
      }),
      ChannelDtmfReceived: model('ChannelDtmfReceived', {
        digit: { type: 'string', required: true }, duration_ms: { type: 'int', required: true }, ...channel,
      }),
      Dial: model('Dial', {
        caller: { type: 'Channel', required: false },
        peer: { type: 'Channel', required: true },
        forward: { type: 'string', required: false },
        forwarded: { type: 'Channel', required: false },
        dialstring: { type: 'string', required: false },
        dialstatus: { type: 'string', required: true },
      }),
      ApplicationReplaced: model('ApplicationReplaced', {}),
    },
  };
}

/** Resource listing (`resources.json`) and one declaration per resource, keyed by resource name. */
export function ariApiDocs(): { listing: object; resources: Record<string, ApiDeclaration> } {
  const resources: Record<string, ApiDeclaration> = {
    asterisk: asterisk(),
    channels: channels(),
    bridges: bridges(),
    applications: applications(),
    events: events(),
  };
  const listing = {
    _copyright: 'Fake ARI for Callplane tests',
    apiVersion: ARI_API_VERSION,
    swaggerVersion: '1.2',
    basePath: BASE_PLACEHOLDER,
    apis: Object.keys(resources).map((name) => ({ path: `/api-docs/${name}.{format}`, description: `${name} resource` })),
  };
  return { listing, resources };
}

/** Returns a deep copy of `doc` whose `basePath` points at `origin` + `/ari`. */
export function withBasePath<T extends object>(doc: T, origin: string): T {
  return { ...structuredClone(doc), basePath: `${origin}/ari` };
}
