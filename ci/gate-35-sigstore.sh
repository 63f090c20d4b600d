#!/usr/bin/env bash
# Gate: a bundle signed by `evident sign --sigstore-bundle` verifies with a
# Sigstore verifier written elsewhere (sigstore-js: @sigstore/verify, from
# the npm registry), offline, with the public key as the only trust
# material; and one flipped bit in the payload makes it refuse.  The
# openssl and python3-cryptography interop runs in tests/check_sign.c.
set -euo pipefail
if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
make -j2 build/evident build/verify-bundle >/dev/null
work=build/sigstore-gate
rm -rf "$work" && mkdir -p "$work"
if [ ! -d build/npm/node_modules/@sigstore/verify ]; then
    mkdir -p build/npm
    (cd build/npm && npm install --no-audit --no-fund --silent @sigstore/verify@3.1.1 @sigstore/bundle@4.0.0 >/dev/null)
fi
./build/evident run --protocol protocols/quick.json --backend cpu --db "$work/e.db" >/dev/null
./build/evident export --db "$work/e.db" --out "$work/d.zip" >/dev/null
./build/evident keygen --out "$work/k" >/dev/null
./build/evident sign "$work/d.zip" --key "$work/k" --sigstore-bundle "$work/d.sigstore.json" >/dev/null
./build/verify-bundle "$work/d.zip" --key "$work/k.pub" >/dev/null
NODE_PATH=build/npm/node_modules node tests/interop/sigstore_verify.js "$work/d.sigstore.json" "$work/k.pub"
python3 - "$work/d.sigstore.json" "$work/bad.sigstore.json" <<'PY'
import base64, json, sys
b = json.load(open(sys.argv[1]))
p = bytearray(base64.b64decode(b['dsseEnvelope']['payload']))
p[50] ^= 1
b['dsseEnvelope']['payload'] = base64.b64encode(bytes(p)).decode()
json.dump(b, open(sys.argv[2], 'w'))
PY
if NODE_PATH=build/npm/node_modules node tests/interop/sigstore_verify.js "$work/bad.sigstore.json" "$work/k.pub"; then
    echo "gate-35: a tampered Sigstore bundle verified"; exit 1
fi
echo "gate-35: sigstore-js verifies the signed bundle offline and refuses a flipped bit"
