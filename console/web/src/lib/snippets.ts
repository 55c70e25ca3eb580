import type { InstanceCredentials } from './api-types.js';

export interface Snippet {
  id: string;
  label: string;
  code: string;
}

const js = (value: string): string => JSON.stringify(value);
/** Single-quoted for a POSIX shell: nothing inside is expanded. */
const sh = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;

/** How to connect with curl, nano, PouchDB and a _replicator document, filled in with the instance's values. */
export function buildSnippets(endpoint: string, credentials: InstanceCredentials): Snippet[] {
  const base = endpoint.replace(/\/+$/, '');
  return [
    {
      id: 'curl',
      label: 'curl',
      code: `curl -u ${sh(`${credentials.username}:${credentials.password}`)} ${sh(`${base}/_all_dbs`)}`,
    },
    {
      id: 'nano',
      label: 'nano (Node.js)',
      code: `import nano from 'nano';\nconst couch = nano(${js(credentials.url)});\nconsole.log(await couch.db.list());`,
    },
    {
      id: 'pouchdb',
      label: 'PouchDB',
      code: `const remote = new PouchDB(${js(`${base}/mydb`)}, {\n  auth: { username: ${js(credentials.username)}, password: ${js(credentials.password)} },\n});\nlocal.sync(remote, { live: true, retry: true });`,
    },
    {
      id: 'replicator',
      label: '_replicator document',
      code: JSON.stringify(
        {
          _id: 'mydb-to-backup',
          source: {
            url: `${base}/mydb`,
            auth: { basic: { username: credentials.username, password: credentials.password } },
          },
          target: {
            url: `${base}/mydb-backup`,
            auth: { basic: { username: credentials.username, password: credentials.password } },
          },
          create_target: true,
          continuous: true,
        },
        null,
        2,
      ),
    },
  ];
}
