const KEY = Symbol.for('settee.test.controlPlanes');

export default async function globalTeardown() {
  const planes = globalThis[KEY] ?? [];
  process.stderr.write(`[settee] stopping ${planes.length} control plane(s)\n`);
  delete globalThis[KEY];
  await Promise.all(
    planes.map(async ({ plane, nodes }) => {
      await nodes.stop();
      await plane.stop();
    }),
  );
}
