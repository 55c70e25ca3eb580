/**
 * Whether an Authorization header is a Basic credential CouchDB cannot decode. CouchDB (3.5.2,
 * couch_httpd_auth:basic_name_pw) takes only `Basic ` exactly, and its base64:decode raises on
 * anything but padded base64, which it answers as a 500 unknown_error (missing_padding,
 * bad_char): the gateway answers those itself (401) so no client input makes a 5xx. A value that
 * decodes, with or without a colon, is CouchDB's to judge (without one it is anonymous there).
 * Whitespace inside the value is left to CouchDB too, which skips it.
 */
export function isUndecodableBasicCredential(authorization: string | undefined): boolean {
  if (authorization === undefined || !authorization.startsWith('Basic ')) return false;
  const value = authorization.slice('Basic '.length).replace(/[ \t\r\n]/g, '');
  return value.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(value);
}
