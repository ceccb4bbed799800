// Helpers for the end-to-end MCP suites: the SDK's own Client over Streamable HTTP with a bearer
// credential, and small accessors for tool results.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export interface McpSession {
  client: Client;
  /** tools/call through Client.callTool (which validates structuredContent against outputSchema). */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * Connects and lists tools once (the client caches outputSchemas from tools/list to validate results).
 * `mode: 'dynamic'` connects to /mcp?mode=dynamic.
 */
export async function connectMcp(baseUrl: string, credential: string, options: { list?: boolean; mode?: 'static' | 'dynamic' } = {}): Promise<McpSession> {
  const client = new Client({ name: 'svc-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp${options.mode ? `?mode=${options.mode}` : ''}`), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
  });
  await client.connect(transport);
  if (options.list !== false) await client.listTools();
  return {
    client,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}

export interface ToolError {
  code: string;
  status: number;
  title: string;
  detail: string;
  retryable: boolean;
  errors: { pointer: string; message: string }[];
}

export function structured(res: CallToolResult): Record<string, any> {
  const s = res.structuredContent as Record<string, any> | undefined;
  if (!s) throw new Error(`no structuredContent: ${JSON.stringify(res)}`);
  // The text content carries the same JSON.
  const text = (res.content as { type: string; text: string }[]).find((c) => c.type === 'text')?.text;
  if (text === undefined || JSON.stringify(JSON.parse(text)) !== JSON.stringify(s)) {
    throw new Error(`text content differs from structuredContent: ${text}`);
  }
  return s;
}

export function toolError(res: CallToolResult): ToolError {
  if (!res.isError) throw new Error(`expected isError, got ${JSON.stringify(res.structuredContent)}`);
  const s = structured(res);
  if (s.outcome !== 'error') throw new Error(`isError without outcome error: ${JSON.stringify(s)}`);
  return s.error as ToolError;
}

export function ok(res: CallToolResult): Record<string, any> {
  if (res.isError) throw new Error(`unexpected isError: ${JSON.stringify(res.structuredContent)}`);
  return structured(res);
}

/**
 * Connects the SDK client without a credential but with an OAuth provider, as an OAuth-capable
 * client first would, and returns every URL it fetched while discovering how to sign in. The
 * connection itself must fail (there is no authorization server in the tests).
 */
export async function probeAuthDiscovery(mcpUrl: string): Promise<string[]> {
  const seen: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    seen.push(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    return fetch(input, init);
  };
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return 'http://127.0.0.1/callback';
    },
    get clientMetadata() {
      return { redirect_uris: ['http://127.0.0.1/callback'], client_name: 'test' };
    },
    clientInformation: () => undefined,
    tokens: () => undefined,
    saveTokens: () => undefined,
    redirectToAuthorization: () => undefined,
    saveCodeVerifier: () => undefined,
    codeVerifier: () => 'verifier',
  };
  const client = new Client({ name: 'anon', version: '1.0.0' });
  let connected = false;
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, fetch: recording }));
    connected = true;
  } catch {
    // expected: no authorization server answers
  } finally {
    await client.close().catch(() => undefined);
  }
  if (connected) throw new Error('an anonymous client connected to /mcp');
  return seen;
}
