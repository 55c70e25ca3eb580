import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startProcess, type ManagedProcess } from '../../local/process.js';

export const NGINX_BIN = '/usr/sbin/nginx';

/**
 * Debian's nginx as the anchor proxy: one worker, upstream keep-alive, access log off (the gateway
 * logs no line per request at info either), proxying every path to `upstreamPort`.
 */
export async function startNginx(options: {
  port: number;
  upstreamPort: number;
}): Promise<{ process: ManagedProcess; stop(): Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-bench-nginx-'));
  const config = `
worker_processes 1;
daemon off;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream couch { server 127.0.0.1:${options.upstreamPort}; keepalive 256; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:${options.port};
    keepalive_requests 1000000;
    location / {
      proxy_pass http://couch;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }
}
`;
  await fs.writeFile(path.join(dir, 'nginx.conf'), config);
  const proc = startProcess({
    name: 'nginx',
    command: NGINX_BIN,
    args: ['-c', path.join(dir, 'nginx.conf'), '-p', dir],
  });
  return {
    process: proc,
    async stop() {
      await proc.stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
