// sigstore_verify.js BUNDLE.sigstore.json KEY.pub
//
// Checks a Sigstore bundle v0.3 written by `evident sign --sigstore-bundle`
// with sigstore-js's verifier (@sigstore/verify), offline: the trust
// material is the one public key, found by the bundle's publicKey hint, and
// no transparency-log, certificate-transparency or timestamp authority is
// required (thresholds 0: the bundle has no tlog entry).  Prints one line;
// exit 0 when the DSSE signature verifies, 1 otherwise.
'use strict';
const fs = require('fs');
const crypto = require('crypto');
const { bundleFromJSON } = require('@sigstore/bundle');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');

const json = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const der = crypto.createPublicKey(fs.readFileSync(process.argv[3], 'utf8')).export({ type: 'spki', format: 'der' });
const hint = json.verificationMaterial.publicKey.hint;
const trust = toTrustMaterial(
  {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [],
    ctlogs: [],
    certificateAuthorities: [],
    timestampAuthorities: [],
  },
  { [hint]: { rawBytes: der } }
);
const verifier = new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, tsaThreshold: 0 });
try {
  verifier.verify(toSignedEntity(bundleFromJSON(json)));
  console.log('@sigstore/verify: verified ' + process.argv[2]);
} catch (e) {
  console.log('@sigstore/verify: refused ' + process.argv[2] + ': ' + (e.code || e.name) + ': ' + e.message);
  process.exit(1);
}
