// A POST whose body goes out in chunks with no Content-Length (Transfer-Encoding: chunked), so the
// server cannot refuse it by the declared length and must count the bytes as they arrive.
import { request } from 'node:http';

export interface ChunkedAnswer {
  status: number;
  body: string;
}

export function postChunked(url: string, headers: Record<string, string>, chunks: string[]): Promise<ChunkedAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    // The server may answer 413 and close before every chunk is written.
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}
