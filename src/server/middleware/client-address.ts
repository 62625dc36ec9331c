/**
 * The client's address: the connection's peer, or — only when that peer is one of the
 * configured trusted proxies — the nearest untrusted address in `X-Forwarded-For`
 * (walking from the right, as each proxy appends the address it saw). A header sent by
 * anyone else is ignored, so a client cannot pick the address it is limited as.
 */
import { BlockList, isIP } from 'node:net'
import { KnowHubError } from '../../core/errors.js'

/** Decides whether an address is a trusted proxy. */
export type TrustedProxies = (address: string) => boolean

/**
 * Trusted proxies from addresses and CIDR ranges (`127.0.0.1`, `10.0.0.0/8`, `fd00::/8`);
 * a malformed entry is a `config_error` naming it.
 * @example
 * const trusted = trustedProxies(['127.0.0.1', '10.0.0.0/8'])
 * trusted('10.1.2.3') // true
 */
export function trustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList()
  for (const entry of entries) {
    const [address = '', bits] = entry.trim().split('/')
    const family = isIP(address)
    const prefix = bits === undefined ? undefined : Number(bits)
    if (family === 0 || (prefix !== undefined && (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)))) {
      throw new KnowHubError('config_error', `server.trustedProxies: "${entry}" is not an IP address or CIDR range`, { entry })
    }
    const type = family === 4 ? 'ipv4' : 'ipv6'
    if (prefix === undefined) list.addAddress(address, type)
    else list.addSubnet(address, prefix, type)
  }
  return (address) => {
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address
    const family = isIP(plain)
    return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6')
  }
}

/**
 * The client address of a request that arrived from `peer` with `forwardedFor` (the
 * `X-Forwarded-For` header): the peer unless it is trusted, else the right-most
 * forwarded address that is not a trusted proxy (the left-most when all are).
 * @example
 * clientAddress('10.0.0.5', '203.0.113.7, 10.0.0.9', trustedProxies(['10.0.0.0/8'])) // '203.0.113.7'
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trusted: TrustedProxies | undefined): string | undefined {
  if (!peer || !trusted || !forwardedFor || !trusted(peer)) return peer
  const hops = forwardedFor
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => isIP(hop) !== 0)
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted(hops[i]!)) return hops[i]
  return hops[0] ?? peer
}
