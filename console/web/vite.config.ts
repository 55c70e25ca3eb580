import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console's page. Vite 7 compiles the TSX with esbuild (React's automatic runtime), so no
 * framework plugin is needed. No inline script or style is emitted: the server's CSP allows none.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: true,
    target: 'es2022',
  },
});
