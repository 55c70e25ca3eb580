import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import type { Logger } from 'winston';
import { errorMessage } from '../../observability/logger.js';

/** SETTEE_GATEWAY_TLS_CERT and SETTEE_GATEWAY_TLS_KEY: PEM files. */
export interface CertificateFiles {
  certFile: string;
  keyFile: string;
}

export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
}

export async function readCertificatePair(files: CertificateFiles): Promise<CertificatePair> {
  const [cert, key] = await Promise.all([fsp.readFile(files.certFile), fsp.readFile(files.keyFile)]);
  return { cert, key };
}

export interface CertificateReloaderOptions {
  files: CertificateFiles;
  /** The pair being served now. */
  current: CertificatePair;
  /** Puts a pair that loaded into service (server.setSecureContext). */
  apply(pair: CertificatePair): void;
  logger: Logger;
  /** Quiet time after the last change before the files are read; default DEBOUNCE_MS. */
  debounceMs?: number;
}

export interface CertificateReloader {
  close(): void;
}

/**
 * A Secret volume is updated by writing a new folder and swapping the `..data` symlink (cert and
 * key change in one rename), a hand-managed pair by two writes: a short quiet time reads both
 * after the last of them.
 */
const DEBOUNCE_MS = 500;

/**
 * Serves a renewed certificate without a restart (cert-manager renews the Secret a month before
 * expiry). It watches the folders of both files, not the files: in a Secret volume they are
 * symlinks into `..data`, which Kubernetes replaces, so a watch on the file itself would keep
 * following the old one. After a change the pair is read and loaded into a secure context first;
 * a pair that does not load (half written, key and certificate not matching) is logged and the
 * one in service kept.
 */
export function watchCertificate(options: CertificateReloaderOptions): CertificateReloader {
  const { files, logger } = options;
  const debounceMs = options.debounceMs ?? DEBOUNCE_MS;
  let current = options.current;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // One reload at a time, so an older read never replaces a newer one.
  let reloading = Promise.resolve();

  const reload = async (): Promise<void> => {
    let pair: CertificatePair;
    let certificate: crypto.X509Certificate;
    try {
      pair = await readCertificatePair(files);
      if (closed || (pair.cert.equals(current.cert) && pair.key.equals(current.key))) return;
      tls.createSecureContext(pair);
      certificate = new crypto.X509Certificate(pair.cert);
      options.apply(pair);
    } catch (err) {
      logger.warn('TLS certificate reload failed; the current certificate stays in service', {
        ...files,
        error: errorMessage(err),
      });
      return;
    }
    current = pair;
    logger.info('TLS certificate reloaded', {
      certFile: files.certFile,
      fingerprint256: certificate.fingerprint256,
      validTo: certificate.validTo,
    });
  };
  const schedule = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      reloading = reloading.then(reload);
    }, debounceMs);
  };

  const folders = new Set([path.dirname(files.certFile), path.dirname(files.keyFile)]);
  const watchers = [...folders].map((folder) =>
    fs.watch(folder, { persistent: false }, schedule).on('error', (err) => {
      logger.warn('watching the TLS certificate folder failed; renewals need a restart', {
        folder,
        error: errorMessage(err),
      });
    }),
  );
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}
