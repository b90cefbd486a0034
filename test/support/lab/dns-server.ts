// The lab's CoreDNS stand-in: answers A queries over UDP for a fixed set of names, NXDOMAIN for
// any other name, so kdebug's DNS probe meets real dig output.
//   node --import tsx test/support/lab/dns-server.ts '{"kube-dns.kube-system.svc.cluster.local":"10.96.0.10"}'
import { createSocket } from 'node:dgram';

const records = JSON.parse(process.argv[2] ?? '{}') as Record<string, string>;
const u16 = (n: number) => Buffer.from([n >> 8, n & 255]);

/** The response to one query: the question echoed, one A record when the name is known. */
function answer(query: Buffer, known: Record<string, string>): Buffer {
  let at = 12;
  const labels: string[] = [];
  while (at < query.length && query[at] !== 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('latin1'));
    at += query[at]! + 1;
  }
  const qtype = query.readUInt16BE(at + 1);
  const question = query.subarray(12, at + 5);
  const ip = known[labels.join('.').toLowerCase()];
  const records =
    ip !== undefined && qtype === 1
      ? [
          Buffer.concat([
            u16(0xc00c),
            u16(1),
            u16(1),
            Buffer.from([0, 0, 0, 30]),
            u16(4),
            Buffer.from(ip.split('.').map(Number)),
          ]),
        ]
      : [];
  const flags = 0x8400 | (query[2]! & 1 ? 0x0100 : 0) | (ip === undefined ? 3 : 0); // QR AA, RD copied, NXDOMAIN
  return Buffer.concat([
    query.subarray(0, 2),
    u16(flags),
    u16(1),
    u16(records.length),
    u16(0),
    u16(0),
    question,
    ...records,
  ]);
}

const socket = createSocket('udp4');
socket.on('message', (msg, from) => {
  if (msg.length > 12) socket.send(answer(msg, records), from.port, from.address);
});
socket.bind(53);
