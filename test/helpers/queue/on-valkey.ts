import { DATABASE_SERVER_ENV } from '../../../local/redis-server.js';

// The valkey jest project's set-up: every server the suite starts with startRedis is a valkey-server.
// Jest gives each test file its own copy of process.env, so the other projects' files keep Redis.
process.env[DATABASE_SERVER_ENV] = 'valkey';
