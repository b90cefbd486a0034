// A TCP relay, run inside the lab's client namespace, between kdebug and the real API server: it
// lets the first PASS connections through and resets every later one, so the API server "goes
// away" after the first reads. Usage: api-cut.ts LISTEN_PORT API_HOST API_PORT PASS
import { connect, createServer } from 'node:net';

const [listen, host, port, pass] = process.argv.slice(2).map((a, i) => (i === 1 ? a : Number(a)));
let accepted = 0;
createServer((client) => {
  if (++accepted > Number(pass)) return void client.resetAndDestroy();
  const api = connect(Number(port), String(host));
  client.pipe(api).pipe(client);
  client.on('error', () => api.destroy());
  api.on('error', () => client.destroy());
}).listen(Number(listen), '127.0.0.1', () => process.stdout.write('ready\n'));
