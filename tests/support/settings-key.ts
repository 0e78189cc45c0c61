/** The key that encrypts settings secrets in the test processes and the e2e app (32 bytes, base64). */
export const E2E_SETTINGS_KEY = "dGVzdC1rZXktZm9yLXNldHRpbmdzLXNlY3JldHMtMzI=";
