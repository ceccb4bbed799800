// Requests Node's HTTP parser refuses before the app sees them (headers above its 16 KB limit, a
// control character in a header value, a broken request line) get a problem document, like every
// other refusal, instead of Node's bare status line: 431 request_header_fields_too_large or 400
// malformed_request. The connection is closed afterwards (the parser cannot resynchronise).
import type { Socket } from 'node:net';
import { PROBLEM_MEDIA_TYPE, problemBody } from '../../problem-documents.ts';
import { ProblemError } from '../../problem-error.ts';
import { newRequestId } from './trace.ts';

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** The raw HTTP/1.1 answer to a parser error (exported for tests). */
export function clientErrorResponse(code: string | undefined, baseUrl: string): string {
  const problem =
    code === 'HPE_HEADER_OVERFLOW'
      ? new ProblemError('request_header_fields_too_large', 'The request line and headers must stay under 16 KB together.')
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ProblemError('request_timeout', 'The request did not arrive in time (limits.requestHeadersTimeoutSeconds for the headers, limits.requestTimeoutSeconds for the whole request); send it again.')
        : new ProblemError('malformed_request', 'The HTTP request cannot be read: a header name or value holds a character HTTP does not allow, or the request line is broken.');
  const body = JSON.stringify(problemBody(problem, '/', newRequestId(), baseUrl));
  const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  return (
    `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: ${PROBLEM_MEDIA_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Marks a socket whose request keeps its own time rule (the upload route: an idle timeout between
 * chunks). Node's whole-request timeout (requestTimeout) fires once per request; on a marked socket
 * it is ignored, and the route's own timers answer 408 instead.
 */
export const OWN_TIME_RULE = Symbol('svc.ownTimeRule');

/** Installs the answer on a node HTTP server ('clientError'). */
export function answerClientErrors(server: { on(event: 'clientError', fn: (err: Error & { code?: string }, socket: Socket) => void): unknown }, baseUrl: () => string): void {
  server.on('clientError', (err, socket) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && (socket as unknown as Record<symbol, unknown>)[OWN_TIME_RULE]) return;
    // Timeouts and resets: nothing useful can be written (a timeout answer is the server's own).
    // Resets, unwritable sockets and answers already started: nothing useful can be written. (A
    // request whose body stalled has a response object whose headers are not sent yet: it gets 408,
    // as Node itself would answer.)
    const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err.code, baseUrl()));
  });
}
