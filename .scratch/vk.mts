import { startRedis } from '../local/redis-server.ts';
import { Redis } from 'ioredis';
const s = await startRedis();
const r = new Redis(s.url);
console.log((await r.info('server')).split('\n').filter((l) => /server_name|_version|redis_mode/.test(l)).join('\n'));
r.disconnect(); await s.stop();
