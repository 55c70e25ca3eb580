import { canListenOn, getFreePort } from './ports.js';
import { assertPortFree, LocalPlatformBusyError } from './run-lock.js';

/** The console's default port in `make run`. */
export const PREFERRED_CONSOLE_PORT = 8090;

/**
 * The console's port, decided before anything starts: SETTEE_CONSOLE_PORT, which must be free (and
 * not the gateway's), else 8090, else (taken by the gateway or another process) a free port, which
 * make run says.
 */
export async function chooseConsolePort(
  gatewayPort: number | undefined,
  say: (message: string) => void,
): Promise<number> {
  const requested = process.env.SETTEE_CONSOLE_PORT;
  if (requested) {
    const port = Number(requested);
    if (port === gatewayPort)
      throw new LocalPlatformBusyError(
        `SETTEE_CONSOLE_PORT=${port} is the gateway's port too (SETTEE_GATEWAY_PORT); choose another for one of them`,
      );
    await assertPortFree({
      port,
      what: 'console',
      hint: 'stop what holds it, or choose another with SETTEE_CONSOLE_PORT=<port>',
    });
    return port;
  }
  const byGateway = gatewayPort === PREFERRED_CONSOLE_PORT;
  if (!byGateway && (await canListenOn(PREFERRED_CONSOLE_PORT))) return PREFERRED_CONSOLE_PORT;
  const port = await getFreePort();
  say(
    `port ${PREFERRED_CONSOLE_PORT}, the console's default, is taken (${byGateway ? 'by the gateway, SETTEE_GATEWAY_PORT' : 'by another process'}); the console uses ${port} (or set SETTEE_CONSOLE_PORT=<port>)`,
  );
  return port;
}
