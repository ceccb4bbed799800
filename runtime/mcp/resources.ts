// MCP resources of /mcp (both modes): the published documents an agent orients itself with (the
// agent guide and llms.txt), so a client that reads resources gets them without a tool call. Their
// URIs are the documents' own addresses; the text is the same bytes those addresses serve.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcError } from './jsonrpc.ts';

export interface McpResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  text: string;
}

/** JSON-RPC error for resources/read of a URI the server does not have (MCP specification). */
export const RESOURCE_NOT_FOUND = -32002;

/** The resources/list entries and a uri -> resource table, built once. */
export function resourceTable(resources: readonly McpResource[]): { listed: Resource[]; byUri: ReadonlyMap<string, McpResource> } {
  return {
    listed: resources.map((r) => ({ uri: r.uri, name: r.name, title: r.title, description: r.description, mimeType: r.mimeType, size: Buffer.byteLength(r.text) })),
    byUri: new Map(resources.map((r) => [r.uri, r])),
  };
}

/** Registers resources/list, resources/read and resources/templates/list (none) on a Server. */
export function serveResources(server: Server, table: ReturnType<typeof resourceTable>): void {
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: table.listed }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const resource = table.byUri.get(request.params.uri);
    if (!resource) throw new JsonRpcError(RESOURCE_NOT_FOUND, `Resource not found: ${JSON.stringify(request.params.uri.slice(0, 200))}. resources/list lists the resources.`); // not a contract limit: echo length
    return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: resource.text }] };
  });
}
