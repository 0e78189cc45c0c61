/** The node agent's version: reported at registration, printed by `--version`, named in its install bundle. */
export const AGENT_VERSION = "0.2.0";
