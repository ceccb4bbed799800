// A hostile peer for the tests: a TCP server on loopback that accepts every connection, reads what it
// is sent and never writes a byte (a webhook receiver or an SMTP server that never answers). close()
// destroys the connections it holds, so whatever waits on them fails at once.
import { createServer, type AddressInfo, type Socket } from 'node:net';

export interface SilentServer {
  port: number;
  /** Every connection accepted so far (a test waits for its peer to be connected). */
  sockets: Socket[];
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    sockets,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
