// The 2025 era's adapter for tools: tools/list and tools/call on the SDK v1 low-level `Server`
// inside the session's McpAgent, each call one runCall. The person is asked in the conversation
// by pushing elicitation/create to the client on the call's own stream.

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { elicitsForms, type Conversation } from '../../calls/conversation';
import type { CallHost } from '../../calls/host';
import { runCall } from '../../calls/run-call';
import { traceInput } from '../../calls/trace';
import type { ToolSet } from '../../calls/tool-list';

/** How long a person has to answer in the conversation. */
const ELICIT_TIMEOUT_MS = 5 * 60_000;

export function installTools(
  server: Server,
  tools: ToolSet,
  host: CallHost,
  scopes: () => readonly string[],
): void {
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.listed(await host.policy(), scopes()) as Tool[],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const found = tools.get(request.params.name);
    // Per the MCP spec an unknown tool is a protocol error, not a tool result.
    if (!found)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name.slice(0, 100)}`,
      );
    const outcome = await runCall(
      found.tool,
      found.input,
      request.params.arguments,
      host,
      canElicit(server) ? pushedQuestions(extra) : null,
      traceInput(request.params._meta, extra.requestInfo?.headers),
    );
    // A pushed question is answered within the call: a 2025 call is never suspended.
    if (outcome.kind !== 'result')
      throw new McpError(ErrorCode.InternalError, 'The call could not wait for an answer.');
    return outcome.result as CallToolResult;
  });
}

function canElicit(server: Server): boolean {
  return elicitsForms(server.getClientCapabilities()?.elicitation);
}

function pushedQuestions(
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
): Conversation {
  return {
    async ask(question) {
      const answer = await extra.sendRequest(
        { method: 'elicitation/create', params: { ...question } },
        ElicitResultSchema,
        { timeout: ELICIT_TIMEOUT_MS },
      );
      return {
        action: answer.action,
        ...(answer.content ? { content: answer.content as Record<string, unknown> } : {}),
      };
    },
  };
}
