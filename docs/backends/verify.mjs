// Verifies Tessera session JWTs (ES256) offline against the project's JWKS with Node's built-in
// crypto: no npm packages.
//
//   import { createSessionVerifier } from "./verify.mjs";
//   const verifier = createSessionVerifier({ baseUrl: "https://auth.example.com", projectId });
//   const claims = await verifier.verify(jwtFromTheApp, { kinds: ["verified"] });
//
// Run it as a script:  node verify.mjs JWT [KIND…]   (TESSERA_URL and TESSERA_PROJECT_ID in the
// environment); prints the claims, or the reason and exits 1.
import { createPublicKey, verify as verifySignature } from "node:crypto";

export function createSessionVerifier({ baseUrl, projectId, leewaySeconds = 60, cacheSeconds = 300, refetchSeconds = 10 }) {
  const jwksUrl = `${baseUrl}/v1/projects/${projectId}/jwks.json`;
  let keys = new Map(); // kid → KeyObject
  let fetchedAt = 0;

  async function refresh() {
    const response = await fetch(jwksUrl);
    if (!response.ok) throw new Error(`JWKS answered ${response.status}`);
    const { keys: jwks } = await response.json();
    keys = new Map(jwks.map((jwk) => [jwk.kid, createPublicKey({ key: jwk, format: "jwk" })]));
    fetchedAt = Date.now();
  }

  async function keyFor(kid) {
    if (Date.now() - fetchedAt > cacheSeconds * 1000) await refresh();
    // An unknown kid: the project rotated its signing key. Fetch again, at most every 10 seconds.
    if (!keys.has(kid) && Date.now() - fetchedAt >= refetchSeconds * 1000) await refresh();
    const key = keys.get(kid);
    if (!key) throw new Error("unknown kid");
    return key;
  }

  async function verify(token, { kinds = ["verified"] } = {}) {
    const parts = String(token).split(".");
    if (parts.length !== 3) throw new Error("not a compact JWS");
    const [headerPart, payloadPart, signaturePart] = parts;
    const header = JSON.parse(Buffer.from(headerPart, "base64url"));
    if (header.alg !== "ES256" || header.typ !== "session+jwt") throw new Error("not a Tessera session JWT");
    const key = await keyFor(header.kid);
    const valid = verifySignature(
      "sha256",
      Buffer.from(`${headerPart}.${payloadPart}`),
      { key, dsaEncoding: "ieee-p1363" }, // JWS signatures are r ‖ s, not DER
      Buffer.from(signaturePart, "base64url"),
    );
    if (!valid) throw new Error("bad signature");
    const claims = JSON.parse(Buffer.from(payloadPart, "base64url"));
    const now = Math.floor(Date.now() / 1000);
    if (claims.aud !== projectId) throw new Error("wrong audience");
    if (claims.iss !== baseUrl) throw new Error("wrong issuer");
    if (!(claims.exp + leewaySeconds > now)) throw new Error("expired");
    if (claims.nbf !== undefined && claims.nbf - leewaySeconds > now) throw new Error("not yet valid");
    // anonymous and unverified sessions prove nothing about who the user is: require what you need.
    if (!kinds.includes(claims.kind)) throw new Error(`session kind ${claims.kind} is not accepted here`);
    return claims; // claims.sub is the Tessera profile ID, claims.external_id your user ID
  }

  return { verify };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const verifier = createSessionVerifier({
    baseUrl: process.env.TESSERA_URL,
    projectId: process.env.TESSERA_PROJECT_ID,
  });
  const kinds = process.argv.length > 3 ? process.argv.slice(3) : ["verified"];
  try {
    console.log(JSON.stringify(await verifier.verify(process.argv[2], { kinds })));
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
