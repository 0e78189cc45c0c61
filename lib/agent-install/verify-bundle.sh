# --- a bundle's signature (lib/agent-install/verify-bundle.sh, in every installer the control plane serves) ---
# verify_bundle KIND ARCH FILE SIGNATURE_FILE PUBLIC_KEY succeeds only when SIGNATURE_FILE is an
# Ed25519 signature, by PUBLIC_KEY's private half, of the statement naming FILE's kind, architecture
# and SHA-256 (lib/agent-install/bundle-signing.ts builds the same statement). Needs OpenSSL 3.
verify_bundle() {
  command -v openssl >/dev/null 2>&1 || fail "openssl not found: it checks the bundle's signature (OpenSSL 3, as on Ubuntu 22.04, Debian 12 and RHEL 9)"
  case "$(openssl version 2>/dev/null)" in
    "OpenSSL "[3-9].*) ;;
    *) fail "$(openssl version 2>/dev/null | head -n 1) cannot check an Ed25519 signature: OpenSSL 3 is needed (Ubuntu 22.04, Debian 12, RHEL 9 or later)" ;;
  esac
  vb_dir="$(mktemp -d)"
  vb_sha="$(sha256sum "$3" | cut -d' ' -f1)"
  printf 'gpuforge-bundle-v1\nkind=%s\narch=%s\nsha256=%s\n' "$1" "$2" "$vb_sha" > "$vb_dir/statement"
  printf -- '-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----\n' "$5" > "$vb_dir/key.pem"
  vb_ok=0
  openssl pkeyutl -verify -pubin -inkey "$vb_dir/key.pem" -rawin -in "$vb_dir/statement" -sigfile "$4" >/dev/null 2>&1 || vb_ok=1
  rm -rf "$vb_dir"
  return "$vb_ok"
}
