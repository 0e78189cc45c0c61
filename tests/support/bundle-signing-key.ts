// The Ed25519 key the e2e app signs node bundles with (base64 DER, as BUNDLE_SIGNING_KEY takes it),
// and its public half, as install commands carry it.
export const E2E_BUNDLE_SIGNING_KEY = "MC4CAQAwBQYDK2VwBCIEINyaQJlIoSvz5mqd9t+FMm5T1RJehXhCBvKZyvKADlZf";
export const E2E_BUNDLE_PUBLIC_KEY = "MCowBQYDK2VwAyEAVjSIzZ+bKRsnFduA2bsl4cQnMfPJYacijAmTDn7Zxsc=";
