import { ReconError } from '../errors.ts';

/** The settings that chose a listener's address, as the operator would change them. */
export interface ListenerSettings {
  /** What the listener is, at the head of the message: `admin listener: ` or nothing for recon serve's own. */
  readonly label?: string;
  readonly host: string;
  readonly port: number;
  /** The variables, RECON_HOST and RECON_PORT, and the flags that win over them, if any. */
  readonly hostVariable: string;
  readonly portVariable: string;
  readonly hostFlag?: string;
  readonly portFlag?: string;
}

/**
 * A listener that could not bind, as one CONFIG line that ends with what to change: the port in use, the address
 * not this machine's, the port reserved to privileged processes. The cause is kept for RECON_DEBUG.
 */
export function listenFailure(error: unknown, settings: ListenerSettings): ReconError {
  const { host, port, portVariable } = settings;
  const hostSetting = settings.hostFlag ? `${settings.hostVariable} (or ${settings.hostFlag})` : settings.hostVariable;
  const portSetting = settings.portFlag ? `${portVariable} (or ${settings.portFlag})` : portVariable;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const advice =
    code === 'EADDRINUSE'
      ? `another process listens there: stop it, or set ${portSetting} to a free port`
      : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? `${host} is not an address of this machine: set ${hostSetting} to one (127.0.0.1, or 0.0.0.0 for every interface)`
        : code === 'EACCES'
          ? `port ${port} needs privileges recon should not have: set ${portSetting} to 1024 or above`
          : `check ${hostSetting} and ${portSetting}`;
  return new ReconError(
    'CONFIG',
    `${settings.label ?? ''}cannot listen on ${host}:${port} (${portVariable}): ${(error as Error).message}: ${advice}`,
    { cause: error },
  );
}
