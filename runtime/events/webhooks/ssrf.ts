// The SSRF guard for webhook URLs, at registration and again at every send (DNS can change):
// https only, and no private, loopback, link-local, unique-local, CGNAT or unspecified address after
// DNS resolution. SVC_WEBHOOK_ALLOW_PRIVATE=true (tests only) admits every address and http:// on a
// loopback host, so a test receiver on 127.0.0.1 can be used.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // not a contract limit: a CIDR length
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // not a contract limit: a CIDR length
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // not a contract limit: a CIDR length
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10], // not a contract limit: a CIDR length
  ['ff00::', 8],
] as const) blocked.addSubnet(net, bits, 'ipv6');

/** True for an address a webhook may not reach (IPv4-mapped IPv6 checked as IPv4). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) return blocked.check(address, 'ipv6');
  return true;
}

export function allowPrivateWebhooks(): boolean {
  return ['true', '1', 'yes'].includes((process.env.SVC_WEBHOOK_ALLOW_PRIVATE ?? '').toLowerCase());
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why a URL may not receive webhooks, or null when it may. Resolves the host. */
export async function webhookUrlProblem(raw: string, allowPrivate = allowPrivateWebhooks()): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  const loopbackHttp = allowPrivate && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) return 'must be an https URL';
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return 'has a host name that does not resolve';
  }
  if (addresses.length === 0) return 'has a host name that does not resolve';
  if (addresses.some(isPrivateAddress)) return 'must not point at a private, loopback or link-local address';
  return null;
}
