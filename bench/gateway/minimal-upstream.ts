/**
 * The fastest CouchDB-shaped server node:http allows, so that in the proxy benchmark the proxies,
 * not the upstream, are the bottleneck: every request gets a fixed small JSON answer (with
 * Content-Length) and /_up answers as CouchDB's does. Run as its own process; argv[2] is the port.
 */
import http from 'node:http';

const body = Buffer.from('{"couchdb":"Welcome","version":"3.5.1","vendor":{"name":"bench"}}\n');
const server = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2]), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => process.exit(0));
