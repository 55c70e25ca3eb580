import zlib from 'node:zlib';

/** Content types whose bytes are compressed already: deflate would search them for nothing. */
const PACKED_TYPES = [
  /^image\/(?!svg|bmp|x-ms-bmp|tiff|x-portable)/,
  /^(video|audio)\//,
  /^font\/woff2?$/,
  /^application\/(zip|gzip|x-gzip|zstd|x-xz|x-bzip2|x-7z-compressed|x-rar-compressed|vnd\.rar|pdf|x-compress|x-lzip|x-lz4|brotli)$/,
  /^application\/vnd\.openxmlformats-officedocument\./,
  /^application\/(epub\+zip|java-archive|vnd\.android\.package-archive)$/,
];

/** Below this a sample says little, and what it would save is small anyway. */
const SAMPLE_MIN_BYTES = 4 * 1024;
/** The sample's length: enough for its byte statistics to show. */
const SAMPLE_BYTES = 16 * 1024;
/** Huffman coding of the sample at more than this share of its size: compressed already. */
const PACKED_RATIO = 0.9;

/**
 * Whether an attachment is compressed already (an image, an archive, encrypted or random bytes),
 * so the archive gives its base64 Huffman coding only (archive-compressor.ts). Known types decide;
 * for others (application/octet-stream above all) Huffman coding of its first 16 KB does, on the
 * reading thread: compressed bytes are near uniform, so it cannot shrink them (text, JSON and
 * uncompressed formats come down to 0.5-0.75), and it costs far less than a deflate that searches
 * for matches.
 */
export function isPackedAttachment(contentType: string, firstBytes: Buffer): boolean {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (PACKED_TYPES.some((pattern) => pattern.test(type))) return true;
  if (type.startsWith('text/') || type.endsWith('json') || type.endsWith('xml')) return false;
  if (firstBytes.length < SAMPLE_MIN_BYTES) return false;
  const sample = firstBytes.subarray(0, SAMPLE_BYTES);
  const coded = zlib.deflateRawSync(sample, { level: 1, strategy: zlib.constants.Z_HUFFMAN_ONLY });
  return coded.length > sample.length * PACKED_RATIO;
}
