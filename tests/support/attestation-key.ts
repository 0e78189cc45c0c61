/** The Ed25519 seed (hex) the test stages sign attestation verdicts with: a test key, nothing else is signed with it. */
export const TEST_ATTESTATION_KEY = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
